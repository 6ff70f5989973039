"""Chunks of survey columns for Tabular-DDP: consecutive ones, or dependent ones together.

``grouping="dependence"`` clusters columns by mutual information (from the learning rows), up
to ``k`` per chunk, merging only dependent ones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import sparse, stats

from attrpriv._checks import check_positive_int
from attrpriv.errors import InputError

GROUPINGS = ("order", "dependence")


def order_chunks(columns: Sequence[str], k: int) -> list[tuple[str, ...]]:
    """Consecutive runs of ``k`` columns (the last one may be shorter)."""
    k = check_positive_int(k, "chunk_size")
    if not columns:
        raise InputError("no columns to release: the list of columns is empty")
    names = list(columns)
    return [tuple(names[start : start + k]) for start in range(0, len(names), k)]


def check_chunks(
    chunks: Sequence[Sequence[str]], *, what: str = "chunk", allow_empty: bool = False
) -> list[tuple[str, ...]]:
    """Explicit groups (``what``): lists of distinct columns (none at all if ``allow_empty``)."""
    if isinstance(chunks, str) or not isinstance(chunks, Sequence) or not (chunks or allow_empty):
        raise InputError(f"{what}s must be a non-empty list of lists of columns, got {chunks!r}")
    found: list[tuple[str, ...]] = []
    seen: set[str] = set()
    for number, chunk in enumerate(chunks, start=1):
        if isinstance(chunk, str) or not isinstance(chunk, Sequence):
            raise InputError(f"{what} {number} must be a list of column names, got {chunk!r}")
        if not chunk:
            raise InputError(f"{what} {number} is empty; every {what} needs at least one column")
        for name in chunk:
            if not isinstance(name, str) or name in seen:
                raise InputError(f"column {name!r} in {what} {number} is repeated or not a name")
            seen.add(name)
        found.append(tuple(chunk))
    return found


def mutual_information(codes: pd.DataFrame, n_states: Mapping[str, int]) -> np.ndarray:
    """Plug-in mutual information (nats) between every two columns of level codes."""
    names = [str(c) for c in codes.columns]
    n, m = codes.shape
    if n == 0:
        raise InputError("no rows to measure the dependence between columns")
    sizes = np.array([int(n_states[c]) for c in names])
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    cells = (codes.to_numpy(np.int64) + offsets[:-1]).ravel()
    rows = np.repeat(np.arange(n), m)
    onehot = sparse.csr_matrix(
        (np.ones(n * m, dtype=np.float64), (rows, cells)), shape=(n, int(offsets[-1]))
    )
    joint = np.asarray((onehot.T @ onehot).todense()) / n
    single = np.diag(joint)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = joint * np.log(joint / np.outer(single, single))
    terms = np.nan_to_num(terms, nan=0.0, posinf=0.0, neginf=0.0)
    blocks = np.add.reduceat(np.add.reduceat(terms, offsets[:-1], axis=0), offsets[:-1], axis=1)
    np.fill_diagonal(blocks, 0.0)
    return np.maximum(blocks, 0.0)


def dependence_chunks(
    codes: pd.DataFrame, n_states: Mapping[str, int], k: int, *, alpha: float = 0.01
) -> list[tuple[str, ...]]:
    """Chunks of at most ``k`` columns that keep dependent columns together.

    Average-linkage clustering on mutual information, merging only chunks with a pair that a
    G-test (Bonferroni at ``alpha``) finds dependent; chunks ordered by their first column.
    """
    k = check_positive_int(k, "chunk_size")
    names = [str(c) for c in codes.columns]
    if not names:
        raise InputError("no columns to release: the list of columns is empty")
    m = len(names)
    if m <= k:
        return [tuple(names)]
    info = mutual_information(codes, n_states)
    sizes = np.array([int(n_states[c]) for c in names])
    dof = np.outer(sizes - 1, sizes - 1)
    pairs = max(m * (m - 1) // 2, 1)
    statistic = 2.0 * len(codes) * info
    dependent = stats.chi2.logsf(statistic, np.maximum(dof, 1)) < math.log(alpha / pairs)
    dependent &= dof > 0
    # cluster-level sums of mutual information and "some pair dependent", merged in place
    total = info.copy()
    linked = dependent.copy()
    size = np.ones(m)
    alive = np.ones(m, dtype=bool)
    members: list[list[int]] = [[i] for i in range(m)]
    while True:
        allowed = linked & np.outer(alive, alive) & (size[:, None] + size[None, :] <= k)
        np.fill_diagonal(allowed, False)
        if not allowed.any():
            break
        link = np.where(allowed, total / np.outer(size, size), -np.inf)
        a, b = np.unravel_index(int(np.argmax(link)), link.shape)
        total[a] += total[b]
        total[:, a] = total[a]
        linked[a] |= linked[b]
        linked[:, a] = linked[a]
        size[a] += size[b]
        alive[b] = False
        members[a] += members[b]
    chunks = [sorted(members[i]) for i in range(m) if alive[i]]
    chunks.sort(key=lambda chunk: chunk[0])
    return [tuple(names[i] for i in chunk) for chunk in chunks]


__all__ = ["GROUPINGS", "check_chunks", "dependence_chunks", "mutual_information", "order_chunks"]
