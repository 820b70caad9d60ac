# expect: operator
"""Results of different statuses cannot be added."""

import certify as cf

total = cf.Diagnostic(method="kde_lr", score=2.0) + cf.PopulationEstimate(
    method="mmd_tv", epsilon_estimate=1.0
)
