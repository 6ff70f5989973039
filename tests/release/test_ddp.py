"""Tabular-DDP: release, composition, ledger, chunking, bad input and the CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attrpriv import Categorical, Column, InputError, Integer, Schema, SchemaError
from attrpriv.cli import main
from attrpriv.cli import release_ddp as _registers_the_ddp_command  # noqa: F401
from attrpriv.data.aggregate import aggregator_for
from attrpriv.dp import BudgetLedger, SeededNumpyNoise
from attrpriv.errors import BudgetExceededError
from attrpriv.release.ddp.chunking import dependence_chunks, order_chunks
from attrpriv.release.ddp.mechanism import TabularDDP, discrete_laplace_mae
from attrpriv.release.laplace import LaplaceHistograms

# -- the mechanism on data -----------------------------------------------------------------------

SURVEY = Schema(
    (
        Column("colour", "feature", Categorical(("red", "green", "blue"))),
        Column("likes", "sensitive", Categorical(("yes", "no"))),
        Column("age", "feature", Integer(18, 97)),
        Column("skip", "ignore", None),
    )
)


@pytest.fixture
def survey() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    n = 600
    colour = rng.choice(["red", "green", "blue"], n)
    likes = np.where((colour == "red") ^ (rng.random(n) < 0.1), "yes", "no")
    return pd.DataFrame(
        {"colour": colour, "likes": likes, "age": rng.integers(18, 98, n), "skip": 0}
    )


def seeded(epsilon: float = 1.0, chunk_size: int = 3, **kwargs) -> TabularDDP:
    return TabularDDP(
        epsilon, chunk_size, sampler=SeededNumpyNoise(5), allow_nonprivate=True, **kwargs
    )


def test_release_is_counts_plus_noise_of_the_recorded_scale(survey: pd.DataFrame) -> None:
    mechanism = seeded(structure="chow-liu", max_levels=4, grouping="order")
    result = mechanism.release(survey, SURVEY)
    record = result.record
    assert record.definition == "dependent-dp" and record.mechanism == "tabular-ddp"
    assert list(result.values) == ["colour", "likes", "age"]
    assert list(result.values["age"].index) == ["18..37", "38..57", "58..77", "78..97"]
    with aggregator_for(survey, SURVEY) as aggregator:
        true = np.concatenate(
            [
                aggregator.counts("colour").to_numpy(),
                aggregator.counts("likes").to_numpy(),
                np.add.reduceat(aggregator.counts("age").to_numpy(), [0, 20, 40, 60]),
            ]
        )
    scale = record.noise["scale"]["likes"]
    assert set(record.noise["scale"].values()) == {scale}  # one chunk, one scale
    expected = SeededNumpyNoise(5).discrete_laplace(true, scale)
    got = np.concatenate([v.to_numpy() for v in result.values.values()])
    np.testing.assert_array_equal(got, expected)
    assert record.sensitivity["likes"] == pytest.approx(scale * 1.0)
    assert any("learned from the private data" in a for a in record.assumptions)
    assert result.diagnostics.binned == {"age": ("18..37", "38..57", "58..77", "78..97")}
    json.dumps(result.to_dict())  # plain JSON


def test_dependence_raises_the_scale_and_chunks_of_one_are_the_laplace_baseline(survey) -> None:
    chunked = seeded(1.0, 3, method="pairwise", structure="chow-liu").fit(survey, SURVEY)
    plan = chunked.calibrate().chunks[0]
    assert 2.0 < plan.dependent_sensitivity < plan.row_sensitivity  # colour and likes depend
    baseline = LaplaceHistograms(1.0, ["colour", "likes", "age"], neighbours="substitute")
    laplace = baseline.calibrate(sampler=SeededNumpyNoise(0)).scale
    for method in ("quilt", "pairwise"):
        single = seeded(1.0, 1, method=method, composition="chunks").fit(survey, SURVEY)
        assert [p.scale for p in single.calibrate().chunks] == pytest.approx([laplace] * 3)
        assert single.expected_error().gain == pytest.approx(1.0)
    error = chunked.expected_error()
    ratio = discrete_laplace_mae(laplace) / discrete_laplace_mae(plan.scale)
    assert error.laplace_scale == laplace and error.gain == pytest.approx(ratio)
    assert error.mae == pytest.approx(discrete_laplace_mae(plan.scale))
    assert chunked.epsilon_if_chunks_dependent() == pytest.approx(1.0)  # one chunk: nothing else


def test_expected_error_is_the_discrete_laplace_mean(survey: pd.DataFrame) -> None:
    draws = SeededNumpyNoise(0).discrete_laplace(np.zeros(200_000, dtype=np.int64), 3.0)
    assert np.abs(draws).mean() == pytest.approx(discrete_laplace_mae(3.0), rel=0.02)
    assert discrete_laplace_mae(100.0) == pytest.approx(100.0, rel=1e-3)


def test_composition_splits_epsilon_and_bounds_cross_chunk_loss(survey: pd.DataFrame) -> None:
    mechanism = seeded(0.9, 1, composition="chunks").fit(survey, SURVEY)
    assert [p.epsilon for p in mechanism.calibrate().chunks] == pytest.approx([0.3, 0.3, 0.3])
    assert (
        "sequential over 3 chunks"
        in mechanism.record(mechanism.calibrate(sampler=SeededNumpyNoise(0))).noise["composition"]
    )
    assert mechanism.epsilon_if_chunks_dependent() == pytest.approx(0.9)  # k=1 is row-level
    two = seeded(1.0, 2, structure="chow-liu", method="pairwise").fit(survey, SURVEY)
    plans = two.calibrate().chunks
    worst = plans[1].epsilon + plans[0].row_sensitivity / plans[0].scale
    assert two.epsilon_if_chunks_dependent() == pytest.approx(max(worst, 0.5 + 2 / plans[1].scale))
    assert two.epsilon_if_chunks_dependent() > 1.0  # chunk 1's DS is below its row sensitivity


def test_changing_epsilon_after_fit_needs_a_new_fit_before_release(survey: pd.DataFrame) -> None:
    mechanism = seeded(1.0, structure="chow-liu").fit(survey, SURVEY)
    scale = mechanism.calibrate().chunks[0].scale
    mechanism.epsilon = 0.25  # the fit's merge decisions were made at 1.0 / 2
    with pytest.raises(InputError, match="parameters changed since fit"):
        mechanism.release(survey, SURVEY)
    result = mechanism.fit(survey, SURVEY).release(survey, SURVEY)
    assert result.record.epsilon == 0.25
    recalibrated = mechanism.calibrate().chunks[0].scale
    assert result.record.noise["scale"]["likes"] == pytest.approx(recalibrated)
    assert recalibrated > 3 * scale  # a quarter of the budget: much more noise


def test_networks_from_public_auxiliary_data(survey: pd.DataFrame, tmp_path: Path) -> None:
    aux = tmp_path / "public.parquet"
    survey.iloc[:300].to_parquet(aux)
    mechanism = seeded(aux=aux, structure="chow-liu").fit(survey, SURVEY)
    assert mechanism.learned_from_ == "auxiliary" and mechanism.n_learning_rows_ == 300
    record = mechanism.record(mechanism.calibrate(sampler=SeededNumpyNoise(0)))
    assert "networks learned from public auxiliary data" in record.assumptions


def test_file_input_counts_like_the_frame(survey: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "survey.csv"
    survey.to_csv(path, index=False)
    from_file = seeded(structure="chow-liu", max_learn_rows=200).release(path, SURVEY)
    from_frame = seeded(structure="chow-liu").fit(survey, SURVEY)
    from_path = seeded(structure="chow-liu", max_learn_rows=200).fit(path, SURVEY)
    from_frame.networks_, from_frame.evidence_ = from_path.networks_, from_path.evidence_
    released = from_frame.release(survey, SURVEY)
    assert from_file.diagnostics.n_learning_rows == 200
    for name in ("colour", "likes", "age"):
        pd.testing.assert_series_equal(from_file.values[name], released.values[name])


def test_nonnegative_keeps_the_raw_counts(survey: pd.DataFrame) -> None:
    result = seeded(0.05, nonnegative=True, structure="chow-liu").release(survey, SURVEY)
    raw = result.diagnostics.raw_values
    assert any((series < 0).any() for series in raw.values())
    for name, series in result.values.items():
        pd.testing.assert_series_equal(series, raw[name].clip(lower=0))


def test_ledger_is_charged_before_noise_and_refuses_overspend(survey, tmp_path) -> None:
    ledger = BudgetLedger(tmp_path / "budget.ledger")
    ledger.set_budget(1.0, unit="dependent-dp/answer")
    TabularDDP(0.75, 3, structure="chow-liu").release(survey, SURVEY, ledger=ledger, label="ddp")
    with pytest.raises(BudgetExceededError, match="would exceed the budget"):
        TabularDDP(0.5, 3, structure="chow-liu").release(survey, SURVEY, ledger=ledger)
    entries = ledger.entries()
    assert [e.label for e in entries] == ["ddp"] and entries[0].record.definition == "dependent-dp"


def test_refuses_nonprivate_noise_unless_asked(survey: pd.DataFrame) -> None:
    with pytest.raises(InputError, match="not private"):
        TabularDDP(1.0, sampler=SeededNumpyNoise(0)).release(survey, SURVEY)


def block_codes(n: int = 2000) -> pd.DataFrame:
    """Columns a0, b0, a1, b1, a2, b2: a_t and b_t copies of each other, blocks independent."""
    rng = np.random.default_rng(3)
    columns = {}
    for t in range(3):
        base = rng.integers(0, 3, n)
        columns[f"a{t}"] = base
        columns[f"b{t}"] = np.where(rng.random(n) < 0.9, base, rng.integers(0, 3, n))
    return pd.DataFrame(columns).iloc[:, [0, 2, 4, 1, 3, 5]]


def test_dependence_grouping_puts_dependent_columns_together() -> None:
    codes = block_codes()
    assert order_chunks(list(codes.columns), 2) == [("a0", "a1"), ("a2", "b0"), ("b1", "b2")]
    chunks = dependence_chunks(codes, dict.fromkeys(codes.columns, 3), 2)
    assert sorted(chunks) == [("a0", "b0"), ("a1", "b1"), ("a2", "b2")]


# -- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"epsilon": 0.0}, "epsilon must be > 0"),
        ({"epsilon": 1.0, "chunk_size": 0}, "chunk_size must be an integer >= 1"),
        ({"epsilon": 1.0, "method": "exact"}, "method must be one of"),
        ({"epsilon": 1.0, "structure": "pc"}, "structure must be one of"),
        ({"epsilon": 1.0, "grouping": "random"}, "grouping must be one of"),
        ({"epsilon": 1.0, "chunks": [["colour"], []]}, "chunk 2 is empty"),
        ({"epsilon": 1.0, "chunks": [["colour", "colour"]]}, "'colour' in chunk 1 is repeated"),
        ({"epsilon": 1.0, "chunks": [["likes"]], "columns": ["likes"]}, "either columns or"),
        ({"epsilon": 1.0, "columns": []}, "at least one column"),
        ({"epsilon": 1.0, "columns": ["height"]}, "'height' is not in the schema"),
        ({"epsilon": 1.0, "columns": ["skip"]}, "'skip' has no domain"),
        ({"epsilon": 1.0, "structure": "exact", "chunk_size": 5}, "at most 4 columns"),
        ({"epsilon": 1.0, "max_levels": 1}, "max_levels must be an integer >= 2"),
    ],
)
def test_bad_parameters(survey: pd.DataFrame, kwargs: dict, message: str) -> None:
    survey = survey.assign(**{f"x{k}": 0 for k in range(3)})
    schema = Schema(
        (*SURVEY.columns, *(Column(f"x{k}", "feature", Integer(0, 1)) for k in range(3)))
    )
    with pytest.raises(InputError, match=message):
        TabularDDP(**kwargs).fit(survey, schema)


@settings(max_examples=30, deadline=None)
@given(
    chunk_size=st.one_of(st.integers(max_value=0), st.floats(allow_nan=True), st.text(max_size=3)),
    epsilon=st.one_of(st.floats(max_value=0.0), st.just(math.inf), st.just(math.nan)),
)
def test_bad_chunk_size_or_epsilon_is_named(chunk_size, epsilon) -> None:
    frame = pd.DataFrame({"likes": ["yes", "no"]})
    schema = Schema((Column("likes", "feature", Categorical(("yes", "no"))),))
    with pytest.raises(InputError, match="chunk_size must be an integer >= 1"):
        TabularDDP(1.0, chunk_size).fit(frame, schema)
    with pytest.raises(InputError, match="epsilon must be"):
        TabularDDP(epsilon, 2).fit(frame, schema)


def test_bad_data(survey: pd.DataFrame) -> None:
    single = Schema((*SURVEY.columns, Column("one", "feature", Categorical(("only",)))))
    with pytest.raises(InputError, match="'one' has a single level"):
        TabularDDP(1.0).fit(survey.assign(one="only"), single)
    with pytest.raises(SchemaError, match="'colour' has 600 values, the first at row 0"):
        TabularDDP(1.0).fit(survey.assign(colour="purple"), SURVEY)
    with pytest.raises(InputError, match="has no rows"):
        TabularDDP(1.0, aux=survey.iloc[:0]).fit(survey, SURVEY)
    with pytest.raises(InputError, match="not fitted yet"):
        TabularDDP(1.0).expected_error()
    fitted = TabularDDP(1.0, structure="chow-liu").fit(survey, SURVEY)
    other = Schema((Column("colour", "feature", Categorical(("red", "blue"))), *SURVEY.columns[1:]))
    with pytest.raises(InputError, match="'colour' differs from the schema"):
        fitted.release(survey, other)


# -- CLI -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--max-levels", "1"], "max_levels must be an integer >= 2"),
        (["--aux", "nowhere.csv"], "neither a bundled dataset nor an existing file"),
        (["--columns", "pid,colour"], "'colour' is not in the schema"),
        (["--model", "nowhere.json"], "cannot read the model file nowhere.json"),
        (["--modules", "pid,vote;pid"], "column 'pid' in module 2 is repeated"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(capsys, extra: list[str], message: str) -> None:
    code = main(["release", "ddp", "anes96", "--epsilon", "1", *extra])
    err = capsys.readouterr().err
    lines = [line for line in err.strip().splitlines() if not line.startswith("release ddp: ")]
    assert code == 2 and message in err and len(lines) == 1


# -- whole-survey calibration ---------------------------------------------------------------------


def test_the_default_calibrates_every_answer_against_the_full_epsilon(survey) -> None:
    """colour and likes depend on each other, age on nothing: two chunks, each at the full
    epsilon (no share of the budget), each with a confirmed empty ring, and the record says
    what the guarantee rests on."""
    mechanism = seeded(1.0, 2, structure="chow-liu", max_levels=4).fit(survey, SURVEY)
    assert mechanism.chunks_ == (("colour", "likes"), ("age",))
    assert [b.confirmed and not b.ring for b in mechanism.boundaries_] == [True, True]
    plan = mechanism.calibrate()
    assert [p.epsilon for p in plan.chunks] == [1.0, 1.0]
    assert plan.scales()["age"] == pytest.approx(2.0)  # its own histogram only
    assert 2.0 < plan.scales()["likes"] < 4.0  # depends on colour: more, not all of it
    record = mechanism.record(plan)
    assert "every answer against the full epsilon" in record.noise["composition"]
    assert any("boundary ring" in a and "parity" in a for a in record.assumptions)
    assert mechanism.epsilon_if_chunks_dependent() == pytest.approx(
        sum(p.row_sensitivity / p.scale for p in plan.chunks)
    )


def test_too_few_rows_to_test_a_ring_merge_the_chunks(survey) -> None:
    """30 rows cannot test a pair of 4-level columns: the rings stay unconfirmed, so the
    chunks are merged into one, which needs no ring."""
    mechanism = seeded(1.0, 1, max_levels=4).fit(survey.iloc[:30], SURVEY)
    assert mechanism.chunks_ == (("colour", "likes", "age"),)
    assert [b.ring for b in mechanism.boundaries_] == [()]


def test_a_ring_too_telling_at_a_smaller_epsilon_falls_back_to_laplace() -> None:
    """Fitted at epsilon 1 the weak link's end is a usable ring; at 0.3 its influence alone
    exceeds epsilon, so every histogram gets the row-level Laplace scale, and the record says
    why. A public call refuses such a stale fit (below); the plan is made from the fitted state
    directly here, to check the defensive path itself."""
    rng = np.random.default_rng(4)
    n = 20_000
    x0 = rng.integers(0, 2, n)
    x1 = np.where(rng.random(n) < 0.9, x0, 1 - x0)
    x2 = np.where(rng.random(n) < 0.6, x1, 1 - x1)  # the weak link
    x3 = np.where(rng.random(n) < 0.9, x2, 1 - x2)
    frame = pd.DataFrame({"x0": x0, "x1": x1, "x2": x2, "x3": x3})
    schema = Schema(tuple(Column(c, "feature", Integer(0, 1)) for c in frame))
    mechanism = TabularDDP(1.0, 2).fit(frame, schema)
    assert mechanism.chunks_ == (("x0", "x1"), ("x2", "x3"))
    assert [b.ring for b in mechanism.boundaries_] == [("x2",), ("x1",)]
    assert not mechanism.calibrate().fallback
    mechanism.epsilon = 0.3
    plan = mechanism._calibrate(mechanism._facts(), mechanism._sampler())
    assert "no bound below epsilon" in plan.fallback
    assert all(v == pytest.approx(8 / 0.3) for v in plan.scales().values())
    assert any("row-level Laplace scale" in a for a in mechanism.record(plan).assumptions)


def test_pairwise_needs_the_papers_composition(survey) -> None:
    with pytest.raises(InputError, match="give composition='chunks'"):
        TabularDDP(1.0, method="pairwise", composition="survey").fit(survey, SURVEY)
    fitted = seeded(1.0, 2, structure="chow-liu").fit(survey, SURVEY)
    fitted.method = "pairwise"  # auto: the paper's composition, which needs its own fit
    with pytest.raises(InputError, match="parameters changed since fit"):
        fitted.calibrate()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("epsilon", 0.3),
        ("chunk_size", 3),
        ("max_levels", 3),
        ("seed", 1),
        ("columns", ["colour", "likes"]),
    ],
)
def test_a_fit_made_for_other_parameters_is_refused(survey, name: str, value: object) -> None:
    """Chunks merge at epsilon / 2 and the networks follow every other fit parameter: a
    calibration or release after one of them changed would use decisions made for another."""
    fitted = seeded(1.0, 2).fit(survey, SURVEY)
    fitted.set_params(**{name: value})
    with pytest.raises(InputError, match=r"parameters changed since fit: call fit\(data, schema\)"):
        fitted.calibrate()
    with pytest.raises(InputError, match="parameters changed since fit"):
        fitted.release(survey, SURVEY)
    fitted.set_params(**{name: seeded(1.0, 2).get_params()[name]})
    assert fitted.calibrate().epsilon == 1.0


def test_post_processing_parameters_need_no_new_fit(survey) -> None:
    fitted = seeded(1.0, 2).fit(survey, SURVEY)
    fitted.set_params(nonnegative=not fitted.nonnegative)
    assert fitted.calibrate().epsilon == 1.0


def test_cli_help_says_what_is_protected(capsys) -> None:
    code = main(["release", "ddp", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert code == 0
    assert "protects any one answer of any respondent, also through the answers" in text


def test_exact_structure_with_a_ring_beyond_four_answers_learns_a_tree() -> None:
    """A chunk of four with a ring of one is five answers: more than the exhaustive search
    takes, so that chunk's network is a Chow-Liu tree instead of an error."""
    rng = np.random.default_rng(5)
    n = 20_000
    columns = {}
    previous = rng.integers(0, 2, n)
    for k in range(8):
        keep = 0.6 if k == 4 else 0.9  # the weak link between the two chains of four
        previous = columns[f"x{k}"] = np.where(rng.random(n) < keep, previous, 1 - previous)
    frame = pd.DataFrame(columns)
    schema = Schema(tuple(Column(c, "feature", Integer(0, 1)) for c in frame))
    mechanism = TabularDDP(1.0, 4, structure="exact").fit(frame, schema)
    assert any(len(b.ring) + len(b.chunk) > 4 for b in mechanism.boundaries_)
    assert not mechanism.calibrate().fallback
