"""Status-typed audit methods built on :mod:`certify.stats`."""

from certify.methods.audit import AuditTable, audit_pairs, select_pairs
from certify.methods.routes import gauss_mech, kde_lr, mmd_permutation_test, mmd_tv, roc_oof

__all__ = [
    "AuditTable",
    "audit_pairs",
    "gauss_mech",
    "kde_lr",
    "mmd_permutation_test",
    "mmd_tv",
    "roc_oof",
    "select_pairs",
]
