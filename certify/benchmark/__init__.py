"""Known-epsilon benchmark: prototypes, mechanisms with exact references, oracle tests, grid runner.

An auditor's only way to know whether an audit method is calibrated is to run it where the answer
is known (paper Sec. 6, Appendices B-C).
"""

from certify.benchmark.ceiling import plug_in_ceiling
from certify.benchmark.demo import run_small_benchmark
from certify.benchmark.grid import Setting, presets, read_results, run_grid
from certify.benchmark.mechanisms import (
    Anisotropic,
    Gaussian,
    Laplace,
    Mechanism,
    Null,
    RandomizedResponse,
    mechanism_for,
)
from certify.benchmark.pairs import benchmark_pairs, power_pairs
from certify.benchmark.prototypes import PrototypeSet, clustered, dispersed, sensitivities
from certify.benchmark.tables import write_tables

__all__ = [
    "Anisotropic",
    "Gaussian",
    "Laplace",
    "Mechanism",
    "Null",
    "PrototypeSet",
    "RandomizedResponse",
    "Setting",
    "benchmark_pairs",
    "clustered",
    "dispersed",
    "mechanism_for",
    "plug_in_ceiling",
    "power_pairs",
    "presets",
    "read_results",
    "run_grid",
    "run_small_benchmark",
    "sensitivities",
    "write_tables",
]
