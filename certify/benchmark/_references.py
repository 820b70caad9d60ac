"""Laplace AUC references of the grid: computed once per prototype set and epsilon, in chunks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, cast

import attrs

from certify.benchmark._compute import _pairs, _prototype_set
from certify.benchmark._setting import PairSetName, PrototypeName, Setting
from certify.benchmark._workers import _SingleThreaded

__all__ = ["laplace_references"]

@attrs.frozen
class _RefKey:
    """Identity of one cached set of Laplace AUC references."""

    prototypes: str
    epsilon_g: float
    pair_set: str
    pair_count: int
    dimension: int
    draws: int

    @property
    def file_name(self) -> str:
        """Cache file name."""
        return (f"laplace-{self.prototypes}-d{self.dimension}-eps{self.epsilon_g:g}-"
                f"{self.pair_set}{self.pair_count}-draws{self.draws}.json")


def _ref_key(setting: Setting) -> _RefKey:
    """The reference cache key of a setting."""
    return _RefKey(setting.prototypes, setting.epsilon_g, setting.pair_set, setting.pair_count,
                   setting.dimension, setting.reference_draws)


def laplace_references(key: _RefKey) -> dict[str, float]:
    """Monte Carlo AUC of the exact LR score for every pair of a Laplace setting (Sec. 6.2)."""
    return _reference_chunk((key,), 0, None)[key.file_name]


def _reference_pairs(key: _RefKey) -> list[tuple[int, int]]:
    """The pairs whose references a key holds."""
    ps = _prototype_set(key.prototypes, key.dimension)
    probe = Setting("reference", cast(PrototypeName, key.prototypes), "laplace", key.epsilon_g or 1.0, 30, 0,
                    pair_set=cast(PairSetName, key.pair_set), pair_count=key.pair_count,
                    dimension=key.dimension)
    return _pairs(probe, ps)


def _reference_chunk(keys: tuple[_RefKey, ...], start: int, stop: int | None) -> dict[str, dict[str, float]]:
    """References of pairs ``start:stop`` for keys that differ only in epsilon (draws shared).

    Each value equals ``Laplace(ps, key.epsilon_g).reference_auc(i, j, n_draws=key.draws)`` bit
    for bit (:func:`~certify.benchmark.mechanisms.laplace_reference_aucs`).
    """
    from certify.benchmark.mechanisms import laplace_reference_aucs

    with _SingleThreaded():
        first = keys[0]
        ps = _prototype_set(first.prototypes, first.dimension)
        out: dict[str, dict[str, float]] = {k.file_name: {} for k in keys}
        for i, j in _reference_pairs(first)[start:stop]:
            aucs = laplace_reference_aucs(ps, [k.epsilon_g for k in keys], i, j, n_draws=first.draws)
            for k, value in zip(keys, aucs, strict=True):
                out[k.file_name][f"{i}-{j}"] = float(value)
        return out


_REFERENCE_CHUNK_PAIRS: Final = 4
"""Pairs per reference task (all epsilons of a prototype set share each pair's draws)."""


def _reference_tasks(keys: Sequence[_RefKey]) -> list[tuple[tuple[_RefKey, ...], int, int]]:
    """Reference tasks: keys grouped by everything but epsilon, pairs cut into small chunks."""
    groups: dict[tuple[str, str, int, int, int], list[_RefKey]] = {}
    for k in keys:
        groups.setdefault((k.prototypes, k.pair_set, k.pair_count, k.dimension, k.draws), []).append(k)
    tasks = []
    for group in groups.values():
        n_pairs = len(_reference_pairs(group[0]))
        for start in range(0, n_pairs, _REFERENCE_CHUNK_PAIRS):
            tasks.append((tuple(group), start, min(start + _REFERENCE_CHUNK_PAIRS, n_pairs)))
    return tasks
