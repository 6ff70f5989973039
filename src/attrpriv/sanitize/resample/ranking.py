"""Which columns are the proxies of a sensitive one, ranked on public auxiliary data."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from attrpriv._checks import check_non_negative, check_positive_int
from attrpriv.data.schema import Categorical, Integer, Role, Schema
from attrpriv.errors import InputError, offending
from attrpriv.sanitize.resample._models import Design, Ranking, Task, rank_greedy, strata
from attrpriv.sanitize.table import data_frame

RANKING_ROWS = 10_000
"""The ranking is fitted and validated on at most this many auxiliary rows (a sample stratified
by the sensitive value): 3,000 validation rows pin an AUC to about +-0.01, and the ranking's
boosters and permutations cost in proportion to the rows."""


@dataclass(frozen=True)
class Setup:
    """What the auxiliary data and the schema say before anything is learned (all public)."""

    domain: tuple[Hashable, ...]
    codes: np.ndarray
    used: tuple[str, ...]
    candidates: tuple[str, ...]
    domains: Mapping[str, Sequence[Hashable]]
    from_aux: bool
    task: str | None


def prepare(
    aux: object,
    sensitive: str,
    *,
    schema: Schema | None,
    keep: Sequence[str],
    categories: Sequence[Hashable] | None,
    task: str | None = None,
) -> tuple[pd.DataFrame, Setup]:
    """Check the auxiliary frame and read its public facts (see :func:`rank_proxies_greedy`);
    the task's target is ``task``, else the schema's target."""
    frame = data_frame(aux, "aux")
    ignored = _ignored_columns(frame, sensitive, schema, keep)
    used = tuple(c for c in frame.columns if c not in ignored)
    domain = _domain(frame[sensitive], sensitive, schema, categories)
    codes = sensitive_codes(frame[sensitive], domain, "the auxiliary data")
    if np.unique(codes).size < 2:
        raise InputError(
            f"the sensitive column {sensitive!r} takes one value in the auxiliary data: there "
            "is nothing to learn its proxies from"
        )
    task = _task(task, schema, frame, used, sensitive)
    kept = _kept_columns(keep, schema, task)
    candidates = tuple(c for c in used if c != sensitive and c not in kept)
    domains = {**_schema_categories(schema, used), sensitive: domain}
    from_aux = categories is None and (schema is None or sensitive not in schema)
    return frame, Setup(domain, codes, used, candidates, domains, from_aux, task)


def _ignored_columns(
    frame: pd.DataFrame, sensitive: str, schema: Schema | None, keep: Sequence[str]
) -> set[str]:
    """The schema's ignored columns, once the schema, the sensitive column and ``keep`` fit."""
    if schema is not None and not isinstance(schema, Schema):
        raise InputError(f"schema must be a Schema, got {type(schema).__name__}")
    if sensitive not in frame.columns:
        raise InputError(f"the sensitive column {sensitive!r} is not in the auxiliary data")
    ignored = set() if schema is None else set(schema.with_role(Role.IGNORE))
    if sensitive in ignored:
        raise InputError(f"the sensitive column {sensitive!r} has role 'ignore' in the schema")
    for name in keep:
        if name not in frame.columns:
            raise InputError(f"keep names {name!r}, which is not in the auxiliary data")
    return ignored


def _task(
    task: str | None,
    schema: Schema | None,
    frame: pd.DataFrame,
    used: Sequence[str],
    sensitive: str,
) -> str | None:
    """The task's target: ``task``, else the schema's target if the auxiliary data has it."""
    if task is None and schema is not None and schema.target in frame.columns:
        task = schema.target
    if task is not None and (task not in used or task == sensitive):
        where = "is the sensitive column" if task == sensitive else "is not a used column"
        raise InputError(f"the task's target {task!r} {where} of the auxiliary data")
    return task


def _kept_columns(keep: Sequence[str], schema: Schema | None, task: str | None) -> set[str]:
    """The columns never picked: ``keep``, the schema's target and the task's target."""
    kept = set(keep) | ({schema.target} if schema is not None and schema.target else set())
    kept |= {task} if task is not None else set()
    return kept


def rank_proxies_greedy(
    aux: pd.DataFrame,
    sensitive: str,
    n_proxies: int = 3,
    *,
    schema: Schema | None = None,
    keep: Sequence[str] = (),
    task: str | None = None,
    task_weight: float = 3.0,
    seed: int = 0,
) -> Ranking:
    """Rank the proxies of ``sensitive`` on public auxiliary rows, greedily.

    Each step removes the candidate whose permutation lowers the validation AUC most (less
    ``task_weight`` times its drop for the task), then refits: the ranking ``proxies="auto"``
    uses. ``keep`` and the ``task`` target (default the schema's) are never picked.

    Parameters
    ----------
    aux : pandas.DataFrame
        Public auxiliary rows with the sensitive column (no missing value). Not modified.
    sensitive : str
        The sensitive column.
    n_proxies : int, default 3
        How many proxies to pick, >= 0 and at most the number of candidates.
    schema : Schema or None, optional
        Public domains and roles.
    keep : sequence of str, default ()
        Columns never picked.
    task : str or None, default None
        The task's target.
    task_weight : float, default 3.0
        How much a candidate's AUC drop for the task counts against it, >= 0.
    seed : int, default 0
        Seeds the validation split and the models, >= 0.

    Returns
    -------
    Ranking
        The proxies in order, their importances and the validation AUC left after each removal.
    """
    if not isinstance(sensitive, str):
        raise InputError(f"sensitive must be a column name, got {sensitive!r}")
    n = check_positive_int(n_proxies, "n_proxies", minimum=0)
    seed = check_positive_int(seed, "seed", minimum=0)
    if isinstance(keep, str) or not isinstance(keep, (list, tuple)):
        raise InputError(f"keep must be a list of column names, got {type(keep).__name__}")
    if task is not None and not isinstance(task, str):
        raise InputError(f"task must be a column name or None, got {task!r}")
    weight = check_non_negative(task_weight, "task_weight")
    frame, setup = prepare(aux, sensitive, schema=schema, keep=keep, categories=None, task=task)
    return rank(frame, setup, n, seed, task_weight=weight)


def rank(
    frame: pd.DataFrame,
    setup: Setup,
    n_proxies: int,
    seed: int,
    stop_at: float | None = None,
    task_weight: float = 0.0,
) -> Ranking:
    """:func:`rank_proxies_greedy` on a prepared frame (stopping early at AUC ``stop_at``)."""
    if n_proxies > len(setup.candidates):
        raise InputError(
            f"n_proxies={n_proxies} but the auxiliary data has {len(setup.candidates)} "
            "candidate columns (not the sensitive one, not kept, not ignored)"
        )
    design = Design.learn(frame, setup.candidates, setup.domains)
    codes = setup.codes
    if len(frame) > RANKING_ROWS:
        every = np.arange(len(frame))
        rows, _ = train_test_split(
            every, train_size=RANKING_ROWS, random_state=seed, stratify=strata(codes)
        )
        rows = np.sort(rows)
        frame, codes = frame.iloc[rows], codes[rows]
    task = None
    if setup.task is not None and task_weight > 0:
        task = Task.of(frame[setup.task], task_weight)
    return rank_greedy(frame, codes, len(setup.domain), design, n_proxies, seed, stop_at, task)


def _domain(
    values: pd.Series,
    sensitive: str,
    schema: Schema | None,
    categories: Sequence[Hashable] | None,
) -> tuple[Hashable, ...]:
    """The sensitive column's public domain: given, the schema's, or the auxiliary values."""
    if categories is not None:
        return tuple(categories)
    if schema is not None and sensitive in schema:
        domain = schema.domain(sensitive)
        if isinstance(domain, (Categorical, Integer)):
            return tuple(domain.categories)
        raise InputError(
            f"the sensitive column {sensitive!r} has a continuous domain in the schema: its "
            "marginal needs a categorical or integer one"
        )
    if values.isna().any():
        _missing(sensitive, values, "the auxiliary data")
    if isinstance(values.dtype, pd.CategoricalDtype):
        return tuple(values.cat.categories)
    distinct = pd.unique(values)
    try:
        return tuple(sorted(distinct))
    except TypeError:  # mixed types: first-seen order
        return tuple(distinct)


def _schema_categories(
    schema: Schema | None, used: Sequence[str]
) -> dict[str, tuple[Hashable, ...]]:
    """The schema's public categories of the categorical columns among ``used``."""
    out: dict[str, tuple[Hashable, ...]] = {}
    if schema is None:
        return out
    for name in used:
        domain = schema[name].domain if name in schema else None
        if isinstance(domain, Categorical):
            out[name] = tuple(domain.categories)
    return out


def sensitive_codes(values: pd.Series, domain: Sequence[Hashable], where: str) -> np.ndarray:
    """The sensitive values' positions in ``domain``; a missing or unknown value is refused."""
    if values.isna().any():
        _missing(str(values.name), values, where)
    codes = np.asarray(
        pd.Index(list(domain)).get_indexer(pd.Index(values.astype(object))), dtype=np.int64
    )
    bad = np.flatnonzero(codes < 0)
    if bad.size:
        position = int(bad[0])
        raise InputError(
            f"column {values.name!r} in {where} has a value"
            f"{offending(values.iloc[position], position)} outside its public domain "
            f"({len(domain)} values)"
        )
    return codes


def _missing(name: str, values: pd.Series, where: str) -> None:
    position = int(np.flatnonzero(np.asarray(values.isna()))[0])
    raise InputError(f"column {name!r} in {where} has a missing value at row {position}")


__all__ = ["Ranking", "rank_proxies_greedy"]
