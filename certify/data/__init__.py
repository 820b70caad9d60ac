"""Embedding tables (loading, cleaning) and their development/reserved splits."""

from certify.data._rows import NORM_FLOOR
from certify.data.splits import ReservedSplit, sample_pairs
from certify.data.table import CleaningReport, DevTestSplit, DroppedRow, EmbeddingTable

__all__ = [
    "NORM_FLOOR",
    "CleaningReport",
    "DevTestSplit",
    "DroppedRow",
    "EmbeddingTable",
    "ReservedSplit",
    "sample_pairs",
]
