# expect: arg-type
"""A diagnostic carries no confidence statement, so it cannot refute a claim."""

import certify as cf

diagnostic = cf.Diagnostic(method="gauss_mech", score=31.0, equation="Eq. 9")
verdict = cf.refute(cf.Claim(epsilon=1.0), diagnostic)
