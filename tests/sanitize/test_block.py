"""Block resampling: the tables' exact sensitivity and privacy loss (broken variants caught), the
redraw read off the noisy tables only, the proxies it picks, the contract and bad input."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pandas as pd
import pytest

from attrpriv.data.schema import Categorical, Column, Integer, Numeric, Role, Schema
from attrpriv.dp import BudgetLedger, OpenDPNoise, SeededNumpyNoise
from attrpriv.dp.accounting import zcdp_to_epsilon
from attrpriv.dp.noise import NoiseSampler
from attrpriv.errors import BudgetExceededError, InputError, NotFittedError
from attrpriv.sanitize import SanitizedTable
from attrpriv.sanitize.block import (
    Association,
    BlockFacts,
    BlockPlan,
    BlockResampler,
    association,
)
from attrpriv.sanitize.block.codebook import column_code
from exact_losses import discrete_gaussian_renyi

TEST = SeededNumpyNoise(0)


def _table(n: int, seed: int) -> pd.DataFrame:
    """A sensitive ``s`` with a categorical copy (a proxy), a numeric proxy with missing values,
    a column unrelated to ``s`` and a task ``y`` that depends on ``s``."""
    rng = np.random.default_rng(seed)
    s = rng.choice(["a", "b", "c"], size=n, p=[0.5, 0.3, 0.2])
    code = pd.Series(s).map({"a": 0, "b": 1, "c": 2}).to_numpy()
    flip = rng.random(n) < 0.1
    copy = np.where(flip, rng.choice(["u", "v", "w"], size=n), np.array(["u", "v", "w"])[code])
    level = np.clip(np.round(20 * code + rng.normal(0, 3, n) + 30), 0, 99).astype(float)
    level[rng.random(n) < 0.05] = np.nan
    y = np.where(rng.random(n) < 0.3 + 0.2 * code, "yes", "no")
    return pd.DataFrame({"s": s, "copy": copy, "level": level,
                         "noise": rng.integers(0, 5, n), "y": y})  # fmt: skip


SCHEMA = Schema(
    (
        Column("s", Role.SENSITIVE, Categorical(("a", "b", "c"))),
        Column("copy", Role.FEATURE, Categorical(("u", "v", "w"))),
        Column("level", Role.FEATURE, Numeric(0.0, 99.0), nullable=True),
        Column("noise", Role.FEATURE, Integer(0, 4)),
        Column("y", Role.TARGET, Categorical(("no", "yes"))),
    )
)


def _fitted(**kwargs: object) -> BlockResampler:
    options: dict[str, object] = {"sampler": TEST, "allow_nonprivate": True, **kwargs}
    return BlockResampler("s", **options).fit(SCHEMA)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def private() -> pd.DataFrame:
    return _table(3000, 11)  # not the resampler's seed: its draws would repeat the table's


# -- the guarantee: exact sensitivity and loss ------------------------------------------------


def _tables(model: BlockResampler, frame: pd.DataFrame) -> np.ndarray:
    measured, _ = model._measure(frame)
    return np.concatenate([t.ravel() for t in measured.tables]).astype(np.float64)


@pytest.mark.parametrize("proxies", ["auto", ["copy"], ["copy", "level"]])
def test_the_worst_neighbour_moves_the_tables_by_the_recorded_sensitivity(
    proxies: object,
) -> None:
    """Every substitution of one row's protected values, on a small table: the largest l2
    distance between the tables equals the plan's sensitivity, and the columns released as
    they are do not move."""
    model = _fitted(proxies=proxies)
    frame = _table(12, 1)
    base, plan = _tables(model, frame), model.calibrate()
    domains = {"s": ["a", "b", "c"], "copy": ["u", "v", "w"], "level": [5.0, 60.0, np.nan]}
    protected = model.protected_
    worst = 0.0
    for row in range(len(frame)):
        for values in itertools.product(*(domains[c] for c in protected)):
            neighbour = frame.copy()
            for name, value in zip(protected, values, strict=True):
                neighbour.loc[row, name] = value
            worst = max(worst, float(np.linalg.norm(_tables(model, neighbour) - base)))
            kept = model._measure(neighbour)[0].public
            pd.testing.assert_frame_equal(kept, model._measure(frame)[0].public)
    assert worst == pytest.approx(plan.sensitivity)
    assert plan.sensitivity == pytest.approx(math.sqrt(2 * len(plan.tables)))


def _exact_rho(plan: BlockPlan) -> float:
    """The smallest rho with D_alpha <= alpha rho for the worst neighbours (2 cells per table
    moved by one), over a grid of orders, computed exactly on the discrete Gaussian."""
    moved = 2 * len(plan.tables)
    return max(moved * discrete_gaussian_renyi(plan.scale, a) / a for a in (1.5, 2, 4, 8, 32, 128))


class _HalfScale(BlockResampler):
    """A broken variant: half the noise it records."""

    def _calibrate(self, public: BlockFacts, sampler: NoiseSampler) -> BlockPlan:
        plan = super()._calibrate(public, sampler)
        return dataclasses.replace(plan, scale=plan.scale / 2.0)


class _Uncounted(BlockResampler):
    """A broken variant: one more table (the sensitive column against the target, again) than
    its sensitivity counts."""

    def _tables(self) -> tuple[tuple[str, ...], ...]:
        tables = super()._tables()
        return (*tables, tables[0])

    def _calibrate(self, public: BlockFacts, sampler: NoiseSampler) -> BlockPlan:
        plan = super()._calibrate(public, sampler)
        fewer = math.sqrt(2 * (len(plan.tables) - 1))
        return dataclasses.replace(plan, sensitivity=fewer, scale=fewer / math.sqrt(2 * plan.rho))


@pytest.mark.parametrize(("epsilon", "delta"), [(0.5, 1e-6), (1.0, 1e-6), (2.0, 1e-9)])
def test_the_exact_loss_is_within_the_recorded_guarantee(epsilon: float, delta: float) -> None:
    model = _fitted(epsilon=epsilon, delta=delta)
    plan = model.calibrate(sampler=OpenDPNoise())
    record = model.record(plan)
    assert _exact_rho(plan) <= plan.rho * (1 + 1e-9)
    assert _exact_rho(plan) == pytest.approx(plan.rho, rel=1e-3)  # the Gaussian bound is tight
    assert zcdp_to_epsilon(plan.rho, delta) <= epsilon + 1e-9
    assert (record.epsilon, record.delta, record.rho) == (epsilon, delta, plan.rho)
    assert record.unit.key == "dp/substitute:s"


def test_the_exact_loss_catches_the_broken_variants(private: pd.DataFrame) -> None:
    half = _HalfScale("s", sampler=TEST, allow_nonprivate=True).fit(SCHEMA).calibrate()
    assert _exact_rho(half) > 3.9 * half.rho
    uncounted = _Uncounted("s", sampler=TEST, allow_nonprivate=True).fit(SCHEMA)
    plan = uncounted.calibrate()
    frame = _table(12, 1)
    neighbour = frame.copy()
    neighbour.loc[0, "s"] = "b" if frame.loc[0, "s"] != "b" else "a"
    moved = float(np.linalg.norm(_tables(uncounted, neighbour) - _tables(uncounted, frame)))
    assert moved > plan.sensitivity * 1.05  # the worst neighbour exceeds what it records


# -- the redraw: a function of the noisy tables and the released columns ----------------------


def test_neighbours_with_the_same_tables_get_the_same_release(private: pd.DataFrame) -> None:
    """Swap the sensitive values of two rows that agree on every other column: the tables are
    the same, so with the same noise and seed the release is too (nothing else is read)."""
    frame = private.copy()
    frame.loc[1, ["copy", "level", "noise", "y"]] = frame.loc[0, ["copy", "level", "noise", "y"]]
    frame.loc[0, "s"], frame.loc[1, "s"] = "a", "c"
    swapped = frame.copy()
    swapped.loc[0, "s"], swapped.loc[1, "s"] = "c", "a"
    first = _fitted(sampler=SeededNumpyNoise(3)).release(frame)
    second = _fitted(sampler=SeededNumpyNoise(3)).release(swapped)
    pd.testing.assert_frame_equal(first.values, second.values)


def test_the_release_keeps_rows_and_columns_and_redraws_the_block(private: pd.DataFrame) -> None:
    before = private.copy()
    out = _fitted().release(private)
    assert isinstance(out, SanitizedTable)
    pd.testing.assert_frame_equal(private, before)  # the input is not modified
    table = out.values
    assert list(table.columns) == list(private.columns)
    assert table.index.equals(private.index)
    redrawn = ["s", *out.diagnostics.proxies]
    assert "copy" in out.diagnostics.proxies and "noise" not in out.diagnostics.proxies
    for name in out.diagnostics.passed_through:
        pd.testing.assert_series_equal(table[name], private[name])
    assert set(out.diagnostics.passed_through) == set(private.columns) - set(redrawn)
    assert set(table["s"]) <= {"a", "b", "c"}
    assert table["level"].dropna().between(0, 99).all()
    # the drawn sensitive value is not the private one row by row
    assert (table["s"] == private["s"]).mean() < 0.75


def test_the_redraw_keeps_the_law_of_the_block_with_the_target(private: pd.DataFrame) -> None:
    """At epsilon 8 on 3,000 rows the released block follows the private one's law with the
    target: P(s | y) and the copy's agreement with s."""
    out = _fitted(epsilon=8.0, sampler=OpenDPNoise(), allow_nonprivate=False).release(private)
    table = out.values
    real = pd.crosstab(private["y"], private["s"], normalize="index")
    drawn = pd.crosstab(table["y"], table["s"], normalize="index")
    assert np.abs(real.to_numpy() - drawn.to_numpy()).max() < 0.05
    agree = (table["copy"] == table["s"].map({"a": "u", "b": "v", "c": "w"})).mean()
    assert agree == pytest.approx(0.93, abs=0.04)  # 90% copies + 10% at random (1/3 agree)


def test_association_scores_noise_near_zero_and_a_copy_near_one() -> None:
    rng = np.random.default_rng(0)
    scale = 20.0
    unrelated = association(np.full((2, 5), 200) + rng.normal(0, scale, (2, 5)), scale)
    assert unrelated.estimate == 0.0 and unrelated.upper < 0.25
    copy = association(np.diag([500.0, 500.0]) + rng.normal(0, scale, (2, 2)), scale)
    assert copy.estimate > 0.95 and copy.upper >= copy.estimate
    hidden = association(np.full((2, 5), 4) + rng.normal(0, scale, (2, 5)), scale)
    assert hidden == Association(0.0, 1.0)  # nothing readable: nothing ruled out


def _noisy_table(v: float, n: int, scale: float, rng: np.random.Generator) -> np.ndarray:
    """Counts of ``n`` rows from a 2 x 4 law with Cramér's V ``v``, plus Gaussian noise."""
    law = np.full((2, 4), 0.125) + np.array([[1.0], [-1.0]]) * np.array([1, -1, 1, -1]) * v / 8
    return rng.multinomial(n, law.ravel()).reshape(2, 4) + rng.normal(0, scale, (2, 4))


@pytest.mark.parametrize(("v", "n"), [(0.0, 400), (0.1, 400), (0.2, 2000), (0.4, 20000)])
def test_the_upper_bound_covers_the_true_association(v: float, n: int) -> None:
    """Over 400 noisy tables of a law with a known V, the upper bound is at least V in at least
    95% of them (3 standard deviations of a normal approximation: 97% at the worst of these;
    the estimate alone falls below V about half the time or more when V > 0), and it tightens
    with n."""
    rng = np.random.default_rng(5)
    found = [association(_noisy_table(v, n, 10.0, rng), 10.0) for _ in range(400)]
    assert np.mean([a.upper >= v for a in found]) >= 0.95
    if v > 0:
        assert np.mean([a.estimate >= v for a in found]) < 0.75
    if n >= 20000:
        assert np.median([a.upper for a in found]) < v + 0.05


def test_a_binned_column_decodes_inside_its_bin() -> None:
    schema = Schema((Column("x", Role.FEATURE, Integer(0, 1000), nullable=True),))
    code = column_code("x", schema, None, 10)
    values = pd.Series([0, 99, 100, 101, 555, 1000, None])
    codes = code.encode(values, "the data")
    assert codes.tolist() == [0, 0, 0, 1, 5, 9, 10]
    drawn = code.decode(np.repeat(np.arange(11), 50), np.random.default_rng(0))
    low = np.repeat(np.r_[0, np.arange(100, 1000, 100) + 1], 50)
    high = np.repeat(np.arange(100, 1001, 100), 50)
    numbers = drawn[:500].astype(float)
    assert ((numbers >= low) & (numbers <= high)).all() and np.isnan(
        drawn[500:].astype(float)
    ).all()


def test_a_bin_takes_another_rows_value_of_that_bin_and_group() -> None:
    """decode_seen: each drawn code takes a value another row holds in that bin, of the row's
    own group where two rows have it; with two rows in a bin and group, each takes the other's."""
    schema = Schema((Column("x", Role.FEATURE, Numeric(0.0, 100.0), nullable=True),))
    code = column_code("x", schema, None, 2)  # bins [0, 50] and (50, 100]
    values = np.array([10.5, 20.5, 30.5, 40.5, 60.5, 70.5, 80.5, np.nan], dtype=object)
    seen = code.encode(pd.Series(values, dtype=float), "the data")
    groups = np.array([0, 0, 1, 1, 0, 0, 1, 0])
    drawn = np.array([0, 0, 0, 0, 1, 1, 1, 2])  # row 6: group 1 has one row of bin 1
    out = code.decode_seen(drawn, seen, values, groups, np.random.default_rng(0))
    assert out[:6].tolist() == [20.5, 10.5, 40.5, 30.5, 70.5, 60.5]
    assert out[6] in (60.5, 70.5) and np.isnan(float(out[7]))
    # a code no other row has falls back to a value inside the bin
    alone = code.decode_seen(np.array([1, 0]), np.array([1, 0]), np.array([75.0, 25.0]),
                             np.zeros(2, dtype=np.int64), np.random.default_rng(1))  # fmt: skip
    assert 50 < float(alone[0]) <= 100 and float(alone[0]) != 75.0


def test_an_auto_proxys_bin_values_are_private_values_of_its_target_a_named_ones_are_not(
    private: pd.DataFrame,
) -> None:
    """An auto-picked numeric proxy is outside the unit: its redrawn value inside the drawn bin
    is one the private rows of the same target hold. A named one is in the unit: none of its
    released values is a private one (uniform inside the bin)."""
    out = _fitted().release(private)
    assert "level" in out.diagnostics.proxies
    table = out.values
    for target in ("no", "yes"):
        mine = set(private.loc[private["y"] == target, "level"].dropna())
        assert set(table.loc[table["y"] == target, "level"].dropna()) <= mine
    named = _fitted(proxies=["copy", "level"]).release(private).values
    assert not set(named["level"].dropna()) & set(private["level"].dropna())


# -- the contract -------------------------------------------------------------------------------


def test_the_ledger_is_charged_before_noise_and_refuses_overspend(
    private: pd.DataFrame, tmp_path: object
) -> None:
    ledger = BudgetLedger(tmp_path / "budget.ledger")  # type: ignore[operator]
    ledger.set_budget(1.05, delta=1e-5, unit="dp/substitute:s")  # one release, not two
    model = BlockResampler("s", epsilon=1.0, sampler=OpenDPNoise()).fit(SCHEMA)
    model.release(private, ledger=ledger, label="first")
    with pytest.raises(BudgetExceededError):
        model.release(private, ledger=ledger)
    assert [e.label for e in ledger.entries()] == ["first"]


def test_a_parameter_changed_after_fit_is_caught(private: pd.DataFrame) -> None:
    model = _fitted()
    model.set_params(proxies=["copy"])
    with pytest.raises(NotFittedError, match="changed since fit"):
        model.release(private)
    with pytest.raises(NotFittedError):
        BlockResampler("s").release(private)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"association": 1.5}, "association"),
        ({"bins": 1}, "bins must be an integer >= 2"),
        ({"delta": 0.0}, "delta"),
        ({"proxies": ["y"]}, "proxies names 'y', which is the task's target"),
        ({"proxies": ["nope"]}, "not in the schema"),
        ({"keep": ["nope"]}, "keep names 'nope'"),
        ({"task": "s"}, "is the sensitive column itself"),
    ],
)
def test_bad_parameters_are_refused_at_fit(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message):
        _fitted(**kwargs)


def test_bad_private_rows_are_refused_without_their_values(private: pd.DataFrame) -> None:
    model = _fitted()
    outside = private.copy()
    outside.loc[7, "copy"] = "Martian"
    with pytest.raises(InputError, match=r"column 'copy' .* at row 7 outside") as caught:
        model.release(outside)
    assert "Martian" not in str(caught.value)
    missing = private.copy()
    missing.loc[4, "s"] = None
    with pytest.raises(InputError, match=r"'s' .* missing value at row 4"):
        model.release(missing)
    with pytest.raises(InputError, match="no column 'noise'"):
        model.release(private.drop(columns="noise"))
    with pytest.raises(InputError, match="sensitive column 'z' is not in the schema"):
        BlockResampler("z").fit(SCHEMA)


# -- public rows as a prior -------------------------------------------------------------------


def test_public_rows_are_added_to_the_noisy_tables_as_a_prior(private: pd.DataFrame) -> None:
    """With the same noise, the release's noisy counts are those without public rows plus the
    public rows' counts times the weight; weight 0 leaves them as they were."""
    public = _table(600, 5)
    options = {"sampler": SeededNumpyNoise(4), "allow_nonprivate": True}

    def counts(model: BlockResampler) -> pd.Series:
        return model.release(private).diagnostics.noisy_counts["s"]

    alone = counts(BlockResampler("s", **options).fit(SCHEMA))  # type: ignore[arg-type]
    for weight in (0.0, 1.0, 2.5):
        options = {"sampler": SeededNumpyNoise(4), "allow_nonprivate": True}
        model = BlockResampler("s", prior_weight=weight, **options)  # type: ignore[arg-type]
        exact = public["s"].value_counts().reindex(["a", "b", "c"]).to_numpy()
        with_prior = counts(model.fit(SCHEMA, public))
        np.testing.assert_allclose(with_prior.to_numpy(), alone.to_numpy() + weight * exact)
        said = " ".join(model.release(private).record.assumptions)
        assert ("counts, each row weighed" in said) == (weight > 0)


def test_what_the_noise_hides_on_few_rows_is_redrawn_and_a_public_prior_tells_it_apart() -> None:
    """On 150 private rows at epsilon 0.5 the noise rules no column out, so every candidate is
    redrawn (a column is released as it is only when the tables show it is not a proxy); with
    3,000 public rows from the same law the unrelated column is shown apart and released as it
    is, and the copy is still redrawn (the noise is the same)."""
    few, public = _table(150, 2), _table(3000, 3)
    alone = _fitted(epsilon=0.5, sampler=SeededNumpyNoise(1)).release(few)
    options = {"sampler": SeededNumpyNoise(1), "allow_nonprivate": True, "epsilon": 0.5}
    helped = BlockResampler("s", **options).fit(SCHEMA, public).release(few)  # type: ignore[arg-type]
    assert set(alone.diagnostics.proxies) == {"copy", "level", "noise"}
    assert alone.diagnostics.association_bound["noise"] >= 0.1
    assert "copy" in helped.diagnostics.proxies and "noise" in helped.diagnostics.passed_through
    assert helped.diagnostics.association_bound["noise"] < 0.1


def test_bad_public_rows_are_refused_naming_them(private: pd.DataFrame) -> None:
    public = _table(100, 6)
    public.loc[3, "copy"] = "Martian"
    with pytest.raises(InputError, match=r"the public rows .* row 3") as caught:
        BlockResampler("s").fit(SCHEMA, public)
    assert "Martian" not in str(caught.value)
    with pytest.raises(InputError, match="no column 'noise' in the public rows"):
        BlockResampler("s").fit(SCHEMA, public.drop(columns="noise"))
    with pytest.raises(InputError, match="prior_weight"):
        BlockResampler("s", prior_weight=-1.0).fit(SCHEMA, _table(100, 6))


# -- proxies drawn given released columns ---------------------------------------------------


def _direct(n: int, seed: int) -> tuple[pd.DataFrame, Schema]:
    """A proxy ``grade`` that depends on ``s`` and, directly, on ``other``, a column unrelated
    to ``s`` that is released as it is."""
    rng = np.random.default_rng(seed)
    s = rng.choice(["a", "b"], size=n)
    other = rng.integers(0, 3, n)
    grade = np.clip((s == "b") * 2 + other + (rng.random(n) < 0.2), 0, 5)
    frame = pd.DataFrame({"s": s, "grade": grade, "other": other})
    schema = Schema(
        (
            Column("s", Role.SENSITIVE, Categorical(("a", "b"))),
            Column("grade", Role.FEATURE, Integer(0, 5)),
            Column("other", Role.FEATURE, Integer(0, 2)),
        )
    )
    return frame, schema


def test_an_auto_proxy_keeps_its_direct_dependence_on_a_released_column() -> None:
    """Drawn given the sensitive value only (conditional="none"), grade loses its tie to
    other; drawn given the columns outside the unit too, it keeps most of it."""
    frame, schema = _direct(4000, 8)
    real = np.corrcoef(frame["grade"], frame["other"])[0, 1]
    found = {}
    for conditional in ("none", "hgb"):
        model = BlockResampler("s", conditional=conditional, sampler=SeededNumpyNoise(2),
                               allow_nonprivate=True).fit(schema)  # fmt: skip
        out = model.release(frame)
        assert out.diagnostics.proxies == ("grade",)
        found[conditional] = np.corrcoef(out.values["grade"], out.values["other"])[0, 1]
    assert real > 0.6 and abs(found["none"]) < 0.1
    assert 0.6 * real < found["hgb"] < real + 0.05


def test_named_proxies_are_never_drawn_given_the_context(
    private: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A named proxy is in the unit: a model of it fitted on the private rows changes between
    neighbours, so only the noisy tables may shape its draw."""
    called: list[str] = []
    original = BlockResampler._context_law

    def spy(self: BlockResampler, name: str, *args: object) -> np.ndarray:
        called.append(name)
        return original(self, name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(BlockResampler, "_context_law", spy)
    _fitted(proxies=["copy"]).release(private)
    assert called == []
    out = _fitted().release(private)
    assert called == list(out.diagnostics.proxies) and called


def test_a_proxy_with_no_tie_shown_is_drawn_from_its_context_alone() -> None:
    """A column redrawn because the noise cannot rule a tie out (its estimate 0, its bound above
    the threshold) is drawn given its context and the target only: two different noise draws
    give the same released column (its noisy slices, mostly noise, are not read), and it keeps
    its tie to the target."""
    rng = np.random.default_rng(7)  # not the resampler's seed: its folds would be the target
    n = 300
    y = rng.choice(["no", "yes"], size=n)
    habit = np.where(rng.random(n) < 0.85, (y == "yes") * 3 + rng.integers(0, 2, n),
                     rng.integers(0, 5, n))  # fmt: skip
    frame = pd.DataFrame({"s": rng.choice(["a", "b"], size=n), "habit": habit, "y": y})
    schema = Schema(
        (
            Column("s", Role.SENSITIVE, Categorical(("a", "b"))),
            Column("habit", Role.FEATURE, Integer(0, 4)),
            Column("y", Role.TARGET, Categorical(("no", "yes"))),
        )
    )
    outs = [
        BlockResampler("s", sampler=SeededNumpyNoise(k), allow_nonprivate=True)
        .fit(schema)
        .release(frame)
        for k in (1, 2)
    ]
    for out in outs:
        assert out.diagnostics.proxies == ("habit",)
        assert out.diagnostics.association["habit"] == 0.0
        assert out.diagnostics.association_bound["habit"] >= 0.1
    pd.testing.assert_series_equal(outs[0].values["habit"], outs[1].values["habit"])
    assert not outs[0].values["s"].equals(outs[1].values["s"])  # the noise did differ
    real = np.corrcoef(frame["habit"], frame["y"] == "yes")[0, 1]
    kept = np.corrcoef(outs[0].values["habit"], outs[0].values["y"] == "yes")[0, 1]
    assert kept > 0.8 * real
