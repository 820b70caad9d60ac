# expect: arg-type
"""A development choice is a Diagnostic: it predicts a bound but cannot refute a claim."""

import tempfile

import numpy as np

import certify as cf

audit = cf.audit_mechanism(
    lambda x, n, rng: x[0] + rng.laplace(0.0, 1.0, size=n), 0.0, 1.0, calls=20_000,
    ledger=cf.Ledger(tempfile.mkdtemp() + "/m.ledger"), progress=False,
)
verdict = cf.refute(cf.Claim(epsilon=0.5), audit.development[0])
_ = np
