# expect: arg-type
"""A plug-in population estimate is not a certificate, so it cannot refute a claim."""

import certify as cf

estimate = cf.PopulationEstimate(method="roc_oof", epsilon_estimate=float("inf"))
verdict = cf.refute(cf.Claim(epsilon=8.0, delta=1e-5), estimate)
