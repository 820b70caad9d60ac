"""certify: audit differential-privacy claims, keeping every number with its status.

Every result is a :class:`Diagnostic` (a modelling score), a :class:`PopulationEstimate` (a sample
value inserted into a valid population inequality) or a :class:`Certificate` (a finite-sample
lower confidence bound, issued only by evaluating a sealed :class:`Protocol` once).
"""

from certify._core import Pair
from certify.blackbox.audit import MechanismAudit, audit_mechanism
from certify.claims import AnyClaim, Claim, GDPClaim, Inconclusive, ProfileClaim, Refuted, ZCDPClaim, refute
from certify.data import (
    CleaningReport,
    DevTestSplit,
    EmbeddingTable,
    ReservedSplit,
    sample_pairs,
)
from certify.data.stream import ReservedStream
from certify.errors import (
    CertifyError,
    DataError,
    EstimatorError,
    ImmutableResultError,
    LedgerError,
    MechanismError,
    ParameterError,
    ProtocolError,
    ProtocolSealedError,
    RecordError,
    ReservedSplitReusedError,
    StatusError,
)
from certify.methods import (
    AuditTable,
    audit_pairs,
    gauss_mech,
    kde_lr,
    mmd_permutation_test,
    mmd_tv,
    roc_oof,
    select_pairs,
)
from certify.protocol import FixedTest, PreregistrationRecord, Protocol, SealedProtocol
from certify.protocol.families import BoundPlan
from certify.protocol.ledger import Ledger, LedgerEntry
from certify.protocol.mmd import MMDTest
from certify.protocol.verify import Verification, verify
from certify.results import (
    Certificate,
    CertificateFamily,
    Diagnostic,
    ErrorRateEvidence,
    LedgerStamp,
    MMDEvidence,
    PopulationEstimate,
    Result,
    Summary,
    summarize,
)

__version__ = "0.1.0"

__all__ = [
    "AnyClaim",
    "AuditTable",
    "BoundPlan",
    "Certificate",
    "CertificateFamily",
    "CertifyError",
    "Claim",
    "CleaningReport",
    "DataError",
    "DevTestSplit",
    "Diagnostic",
    "EmbeddingTable",
    "ErrorRateEvidence",
    "EstimatorError",
    "FixedTest",
    "GDPClaim",
    "ImmutableResultError",
    "Inconclusive",
    "Ledger",
    "LedgerEntry",
    "LedgerError",
    "LedgerStamp",
    "MMDEvidence",
    "MMDTest",
    "MechanismAudit",
    "MechanismError",
    "Pair",
    "ParameterError",
    "PopulationEstimate",
    "PreregistrationRecord",
    "ProfileClaim",
    "Protocol",
    "ProtocolError",
    "ProtocolSealedError",
    "RecordError",
    "Refuted",
    "ReservedSplit",
    "ReservedSplitReusedError",
    "ReservedStream",
    "Result",
    "SealedProtocol",
    "StatusError",
    "Summary",
    "Verification",
    "ZCDPClaim",
    "audit_mechanism",
    "audit_pairs",
    "gauss_mech",
    "kde_lr",
    "mmd_permutation_test",
    "mmd_tv",
    "refute",
    "roc_oof",
    "sample_pairs",
    "select_pairs",
    "summarize",
    "verify",
]
