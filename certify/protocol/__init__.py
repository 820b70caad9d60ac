"""The only issuer of certificates.

Fixed tests and their families, the draft -> sealed -> evaluated lifecycle, pre-registration
records, the spent-split ledger and protocol files.
"""

from certify.protocol.families import BoundPlan
from certify.protocol.fixed import FixedTest, ThresholdRule
from certify.protocol.ledger import Ledger, LedgerEntry
from certify.protocol.lifecycle import Protocol, RegisteredTest, SealedProtocol
from certify.protocol.mmd import MMDTest
from certify.protocol.record import PreregistrationRecord
from certify.protocol.scores import (
    BinnedScore,
    BlockScore,
    DifferenceScore,
    FunctionScore,
    HistogramScore,
    LaplaceScore,
    LinearScore,
    ProductScore,
    ScoreFunction,
    ScoreModel,
    SkopsScore,
)

__all__ = [
    "BinnedScore",
    "BlockScore",
    "BoundPlan",
    "DifferenceScore",
    "FixedTest",
    "FunctionScore",
    "HistogramScore",
    "LaplaceScore",
    "Ledger",
    "LedgerEntry",
    "LinearScore",
    "MMDTest",
    "ProductScore",
    "PreregistrationRecord",
    "Protocol",
    "RegisteredTest",
    "ScoreFunction",
    "ScoreModel",
    "SealedProtocol",
    "SkopsScore",
    "ThresholdRule",
]
