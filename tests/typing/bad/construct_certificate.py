# expect: call-arg
"""Certificates are issued by SealedProtocol.evaluate(); users cannot build one."""

import certify as cf

forged = cf.Certificate(
    method="roc_reserved",
    test_name="logistic",
    pair=cf.Pair("id1", "id2"),
    delta=0.0,
    epsilon_lower=5.0,
    confidence_level=0.95,
    family_id="mine",
    alpha_per_rate=0.0125,
    evidence=cf.ErrorRateEvidence(
        false_positives=0, n_class0=100, false_negatives=0, n_class1=100, u_fpr=0.01, u_fnr=0.01
    ),
    protocol_fingerprint="0" * 64,
    data_fingerprint="0" * 64,
    assumptions=(),
    ledger=cf.LedgerStamp(ledger_id="mine", sequence=1, head="0" * 64, evaluation=1),
)
