"""Each mechanism gives two neighbouring inputs (under its unit) the same decision in Python.

The CLI's release commands are checked in ``tests/cli/test_cli_neighbours.py``; here the
mechanisms themselves, on inputs where a decision could hinge on one row: whether ``release``
returns or raises, with which message, and which warnings it gives. The noise differs (it is
drawn afresh); the decision may not. ``ProxyResampler``'s overlap limit is checked in
``tests/sanitize/test_resample.py``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from attrpriv import Categorical, Column, Integer, Schema
from attrpriv.assess.mitigation import LocalDPNoise
from attrpriv.errors import InputError
from attrpriv.release.graph.network import DiscreteNetwork
from attrpriv.release.laplace import LaplaceHistograms
from attrpriv.release.markov_quilt import AttributeMarkovQuilt, MarkovQuiltMechanism
from attrpriv.release.markov_quilt.chain_model import MarkovChainModel

SURVEY = Schema(
    (
        Column("answer", "sensitive", Categorical(("no", "yes"))),
        Column("age", "feature", Integer(18, 90)),
    )
)
PATH = Schema(tuple(Column(n, "feature", Categorical((0, 1))) for n in "ABCDE"))


def decision(release: Callable[[], object]) -> tuple[str, tuple[str, ...]]:
    """Released or refused (with the message), and the warnings given on the way."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            release()
            outcome = "released"
        except InputError as exc:
            outcome = f"refused: {exc}"
    return outcome, tuple(str(w.message) for w in caught)


def _survey(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(n)
    return pd.DataFrame({"answer": rng.choice(["no", "yes"], n), "age": rng.integers(18, 91, n)})


def _path_network() -> DiscreteNetwork:
    names = list("ABCDE")
    flip = {p: np.array([[p, 1 - p], [1 - p, p]]) for p in (0.95, 0.85)}
    cpds = {"A": [0.5, 0.5], "B": flip[0.95], "C": flip[0.85], "D": flip[0.85], "E": flip[0.85]}
    parents = {names[k]: (names[k - 1],) for k in range(1, 5)}
    return DiscreteNetwork(dict.fromkeys(names, (0, 1)), parents, cpds)


def _records(n: int) -> pd.DataFrame:
    return _path_network().sample(n, np.random.default_rng(n))


def _changed(frame: pd.DataFrame, column: str, value: object) -> pd.DataFrame:
    out = frame.copy()
    out.loc[out.index[0], column] = value
    return out


CASES: dict[str, tuple[Callable[[object], object], object, object]] = {
    # add/remove: one row more or less, down to the empty table
    "laplace histograms, one row vs none": (
        lambda d: LaplaceHistograms(1.0, ["answer", "age"]).release(d, SURVEY),
        _survey(1),
        _survey(1).iloc[:0],
    ),
    "laplace histograms, 30 rows vs 29": (
        lambda d: LaplaceHistograms(1.0, ["answer"]).release(d, SURVEY),
        _survey(30),
        _survey(30).iloc[1:],
    ),
    "laplace histograms, substitution": (
        lambda d: LaplaceHistograms(1.0, ["answer"], neighbours="substitute").release(d, SURVEY),
        _survey(30),
        _changed(_survey(30), "answer", "yes" if _survey(30)["answer"].iloc[0] == "no" else "no"),
    ),
    # one state of a chain
    "markov quilt, one state": (
        lambda d: MarkovQuiltMechanism(
            MarkovChainModel.stationary(np.array([[0.9, 0.1], [0.2, 0.8]])), 1.0
        ).release(d),
        [0, 0, 1, 1, 0, 1, 1, 1],
        [1, 0, 1, 1, 0, 1, 1, 1],
    ),
    # one record's protected attribute
    "attribute markov quilt, one record's A": (
        lambda d: AttributeMarkovQuilt(_path_network(), 2.0, "A", list("BCDE")).release(d, PATH),
        _records(40),
        _changed(_records(40), "A", 1 - int(_records(40)["A"].iloc[0])),
    ),
    # one record's randomized features (local DP)
    "local DP noise, one record's values": (
        lambda d: LocalDPNoise(1.0, schema=SURVEY).release(d, ["answer", "age"]),
        _survey(30),
        _changed(_changed(_survey(30), "age", 90), "answer", "yes"),
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_neighbours_get_the_same_decision(name: str) -> None:
    release, data, neighbour = CASES[name]
    first = decision(lambda: release(data))
    assert first == decision(lambda: release(neighbour))
    assert first[0] == "released", first


def test_the_check_catches_a_decision_on_one_row() -> None:
    """A variant that refuses the empty table (as earlier versions did) is told apart."""

    def refusing(data: pd.DataFrame) -> object:
        if len(data) == 0:
            raise InputError("the data has no rows")
        return LaplaceHistograms(1.0, ["answer"]).release(data, SURVEY)

    assert decision(lambda: refusing(_survey(1))) != decision(lambda: refusing(_survey(0)))
