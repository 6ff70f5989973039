"""The mechanism contract: parameters, one validation at the boundary, accuracy, records."""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
import sys
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.base import clone

import attrpriv
from attrpriv import Categorical, Column, InputError, Integer, Schema
from attrpriv.assess.mitigation.ldp import LocalDPNoise
from attrpriv.data.schema import PrivateDomainWarning
from attrpriv.dp import Accuracy, Mechanism, SeededNumpyNoise
from attrpriv.dp.accuracy import (
    discrete_laplace_half_width,
    gaussian_half_width,
    laplace_half_width,
    noise_std,
)
from attrpriv.dp.noise import NoiseSampler
from attrpriv.errors import NotFittedError
from attrpriv.release import (
    AttributeMarkovQuilt,
    AttributePrivateGaussian,
    DiscreteNetwork,
    GaussianModel,
    LaplaceHistograms,
    MarkovChainModel,
    MarkovQuiltMechanism,
    ModelDDP,
    ModularDDP,
    Secret,
)
from attrpriv.release.ddp.mechanism import TabularDDP
from attrpriv.sanitize.samplers import DPObfuscation, DPSampling

SCHEMA = Schema(
    (
        Column("a", "feature", Categorical(("x", "y"))),
        Column("b", "sensitive", Integer(0, 2)),
    )
)
FRAME = pd.DataFrame({"a": ["x", "y", "x", "x", "y", "y"] * 5, "b": [0, 1, 2, 1, 0, 1] * 5})
TEST = SeededNumpyNoise(0)


def _network() -> DiscreteNetwork:
    return DiscreteNetwork(
        {"a": ("x", "y"), "b": (0, 1, 2)},
        {"b": ("a",)},
        {"a": [0.5, 0.5], "b": [[0.6, 0.3, 0.1], [0.1, 0.3, 0.6]]},
    )


MAKERS: dict[str, Callable[[], Mechanism[Any, Any, Any]]] = {
    "laplace": lambda: LaplaceHistograms(1.0, ["a", "b"], sampler=TEST, allow_nonprivate=True),
    "ddp-modules": lambda: ModularDDP(1.0, [["a"]], sampler=TEST, allow_nonprivate=True),
    "ddp-model": lambda: ModelDDP(1.0, "aux", aux=FRAME, sampler=TEST, allow_nonprivate=True),
    "gaussian": lambda: AttributePrivateGaussian(
        "mean(y)",
        Secret("mean(x)", values=(0.0, 0.2)),
        GaussianModel(["x", "y"], [0.0, 0.0], [[1, 0.5], [0.5, 1]], 100),
        1.0,
        1e-5,
        sampler=TEST,
        allow_nonprivate=True,
    ),
    "chain": lambda: MarkovQuiltMechanism(
        MarkovChainModel.stationary([[0.9, 0.1], [0.2, 0.8]]),
        1.0,
        sampler=TEST,
        allow_nonprivate=True,
    ),
    "attribute-quilt": lambda: AttributeMarkovQuilt(
        _network(), 1.0, "b", ["a"], sampler=TEST, allow_nonprivate=True
    ),
    "obfuscation": lambda: DPObfuscation(1.0, 1.0, sampler=TEST, allow_nonprivate=True),
    "sampling": lambda: DPSampling(1.0, 1.0, sampler=TEST, allow_nonprivate=True),
    "ldp": lambda: LocalDPNoise(1.0, schema=SCHEMA, sampler=TEST, allow_nonprivate=True),
}


def _run(name: str, mechanism: Mechanism[Any, Any, Any], neighbour: bool = False) -> Any:
    """One release of each mechanism on small data (``neighbour``: one row's values changed)."""
    frame = FRAME.copy()
    if neighbour:
        frame.loc[0, ["a", "b"]] = ["y", 2]
    if name in ("laplace", "ddp-modules", "ddp-model", "attribute-quilt"):
        return mechanism.release(frame, SCHEMA)  # type: ignore[attr-defined]
    if name == "ldp":
        return mechanism.release(frame, ["a", "b"])  # type: ignore[attr-defined]
    if name == "chain":
        return mechanism.release([int(neighbour), 1, 1, 0, 0, 1])  # type: ignore[attr-defined]
    rng = np.random.default_rng(0)
    if name == "gaussian":
        values = rng.standard_normal((100, 2))
        values[0] += 3.0 * neighbour
        table = pd.DataFrame(values, columns=["x", "y"])
        schema = Schema((Column("x", "feature", _bounded()), Column("y", "feature", _bounded())))
        return mechanism.release(table, schema)  # type: ignore[attr-defined]
    z = rng.standard_normal((30, 2))
    z[0] += 3.0 * neighbour
    y = (np.arange(30) + neighbour * (np.arange(30) == 0)) % 2
    return mechanism.sample(z, y)  # type: ignore[attr-defined]


def _simple(value: Any) -> bool:
    return isinstance(value, (int, float, str, bool, type(None)))


def _bounded() -> Any:
    from attrpriv import Numeric

    return Numeric(-10.0, 10.0)


@pytest.mark.parametrize("name", MAKERS)
def test_clone_and_params_follow_scikit_learn(name: str) -> None:
    mechanism = MAKERS[name]()
    params = mechanism.get_params()
    assert sorted(params) == sorted(inspect.signature(type(mechanism)).parameters)
    copy = clone(mechanism)
    assert type(copy) is type(mechanism) and copy is not mechanism
    copied = copy.get_params()
    assert type(copied.pop("sampler")) is type(params.pop("sampler"))  # clone deep-copies it
    assert copied.keys() == params.keys()
    assert all(
        copied[k] is params[k] or copied[k] == params[k] for k in params if _simple(params[k])
    )
    copy.set_params(epsilon=2.0)
    assert copy.epsilon == 2.0 and mechanism.epsilon == 1.0
    assert "epsilon=2.0" in repr(copy) and "allow_nonprivate=True" in repr(copy)
    with pytest.raises(InputError, match="has no parameter 'epsilom'"):
        copy.set_params(epsilom=1.0)


@pytest.mark.parametrize("name", MAKERS)
def test_a_bad_parameter_is_refused_before_any_data_is_read(name: str) -> None:
    """Constraints are checked at the boundary: a broken epsilon is named even when the data
    would be refused too (data is only looked at after the parameters)."""
    mechanism = MAKERS[name]().set_params(epsilon=-1.0)
    with pytest.raises(InputError, match=r"^epsilon must be > 0"):
        if hasattr(mechanism, "sample"):
            mechanism.sample(object(), object())
        elif name == "ldp":
            mechanism._release(object(), ("a",), 0)
        else:
            mechanism._release(object(), object())


@pytest.mark.parametrize("name", MAKERS)
def test_calibration_reads_only_the_public_facts_and_they_do_not_tell_neighbours_apart(
    name: str,
) -> None:
    """``_calibrate`` is given the public half of what ``_measure`` returned, nothing else, and
    on two datasets that differ in one row's values the plans give the same record."""
    records = []
    for neighbour in (False, True):
        mechanism = MAKERS[name]()
        measure, calibrate = mechanism._measure, mechanism._calibrate
        measured: list[tuple[Any, Any]] = []

        def spy_measure(*inputs: Any, measure: Any = measure, out: Any = measured) -> Any:
            out.append(measure(*inputs))
            return out[-1]

        def spy_calibrate(
            public: Any, sampler: Any, calibrate: Any = calibrate, out: Any = measured
        ) -> Any:
            assert len(out) == 1 and public is out[0][1]
            return calibrate(public, sampler)

        mechanism._measure = spy_measure  # type: ignore[method-assign]
        mechanism._calibrate = spy_calibrate  # type: ignore[method-assign]
        records.append(_run(name, mechanism, neighbour).record.to_dict())
    assert records[0] == records[1]


def test_the_public_facts_check_catches_a_calibration_that_reads_the_private_answer() -> None:
    """The check above fails on a Laplace mechanism whose scale grows with its largest count."""

    class Peeking(LaplaceHistograms):
        def _measure(self, data: Any, schema: Schema) -> Any:
            private, public = super()._measure(data, schema)
            return private, (public, private)

        def _calibrate(self, public: Any, sampler: NoiseSampler) -> Any:
            facts, private = public
            plan = super()._calibrate(facts, sampler)
            largest = max(int(h.max()) for h in private.values())
            return type(plan)(**{**vars(plan), "scale": plan.scale * largest})

    def record(frame: pd.DataFrame) -> dict[str, Any]:
        peeking = Peeking(1.0, ["a", "b"], sampler=TEST, allow_nonprivate=True)
        return peeking.release(frame, SCHEMA).record.to_dict()

    neighbour = FRAME.copy()
    neighbour.loc[0, ["a", "b"]] = ["y", 2]
    assert record(FRAME) != record(neighbour)


@pytest.mark.parametrize("name", MAKERS)
def test_every_release_says_how_accurate_it_is(name: str) -> None:
    result = _run(name, MAKERS[name]())
    accuracy = result.accuracy
    assert isinstance(accuracy, Accuracy) and accuracy.confidence == 0.95
    assert accuracy.to_dict()["half_width"] is not None
    if name in ("laplace", "ddp-modules", "ddp-model", "attribute-quilt"):
        assert set(accuracy.half_width) == set(result.values)
        for column, series in result.values.items():
            assert list(accuracy.half_width[column].index) == list(series.index)


NOISE_WORDS = ("noisy", "randomized_response", "perturb", "add_noise", "bitsource")
"""Words in a name that suggest it draws noise: such helpers stay private to their mechanism."""


def _import_every_module() -> list[ModuleType]:
    """Every module of attrpriv, but those that fail to import only because torch is missing."""

    def torch_missing(error: BaseException) -> bool:
        name = getattr(error, "name", None) or ""
        return isinstance(error, ModuleNotFoundError) and name.split(".")[0] == "torch"

    def skip_without_torch(package: str) -> None:
        error = sys.exc_info()[1]
        if error is None or not torch_missing(error):
            raise ImportError(f"{package} does not import") from error

    modules = []
    for info in pkgutil.walk_packages(attrpriv.__path__, "attrpriv.", skip_without_torch):
        try:
            modules.append(importlib.import_module(info.name))
        except ImportError as error:
            if not torch_missing(error):
                raise
    return modules


def _is_sampler(value: object) -> bool:
    """The noise samplers of attrpriv.dp.noise: they are what draws noise."""
    return (
        isinstance(value, type)
        and issubclass(value, NoiseSampler)
        and value.__module__ == "attrpriv.dp.noise"
    )


@pytest.mark.filterwarnings(r"ignore:attrpriv\.\S+ is deprecated:DeprecationWarning")  # old paths
def test_no_mechanism_draws_noise_through_a_public_method() -> None:
    for make in MAKERS.values():
        public = [n for n in dir(make()) if not n.startswith("_")]
        assert not [n for n in public if "noise" in n]
        assert "perturb" not in public
    modules = _import_every_module()
    assert len(modules) > 50 and "attrpriv.release.laplace" in {m.__name__ for m in modules}
    offenders = [
        f"{module.__name__}.{name}"
        for module in modules
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (inspect.isfunction(value) or inspect.isclass(value))
        and any(word in name.lower() for word in NOISE_WORDS)
        and not _is_sampler(value)
    ]
    assert not offenders, f"noise drawn outside a mechanism's private _add_noise: {offenders}"


def test_not_fitted_is_an_input_error_naming_fit() -> None:
    with pytest.raises(NotFittedError, match="not fitted yet: call fit"):
        TabularDDP(1.0).calibrate()  # the benchmark comparison: fitted state
    assert issubclass(NotFittedError, InputError) and issubclass(NotFittedError, AttributeError)


def test_a_release_on_an_inferred_schema_says_so_in_its_record() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivateDomainWarning)
        inferred = Schema.infer(FRAME)
    assert inferred.inferred == ("a", "b")
    assert Schema.from_dict(inferred.to_dict()).inferred == ("a", "b")  # kept in the file
    for mechanism in (
        LaplaceHistograms(1.0, ["a"], sampler=TEST, allow_nonprivate=True),
        ModularDDP(1.0, [["a"]], sampler=TEST, allow_nonprivate=True),
        ModelDDP(1.0, "aux", aux=FRAME, sampler=TEST, allow_nonprivate=True),
    ):
        record = mechanism.release(FRAME, inferred).record
        assert any("read from the private data" in a for a in record.assumptions)
        declared = clone(mechanism).release(FRAME, SCHEMA).record
        assert not any("read from the private data" in a for a in declared.assumptions)
    assert inferred.select(["b"]).inferred == ("b",)


def test_local_dp_noise_says_which_of_its_domains_an_inferred_schema_read_off_the_data() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivateDomainWarning)
        inferred = Schema.infer(FRAME)

    def read_off(**given: Any) -> list[str]:
        mechanism = LocalDPNoise(1.0, **given, sampler=TEST, allow_nonprivate=True)
        record = mechanism.release(FRAME, ["a", "b"]).record
        return [a for a in record.assumptions if "read from the private data" in a]

    both = read_off(schema=inferred)  # "a" by randomized response, "b" by Laplace noise
    assert len(both) == 1 and "['a', 'b']" in both[0]
    assert "['b']" in read_off(schema=inferred, domain={"a": ["x", "y"]})[0]  # given: public
    assert "['a']" in read_off(schema=inferred, bounds={"b": (0, 2)})[0]
    assert not read_off(schema=inferred, domain={"a": ["x", "y"]}, bounds={"b": (0, 2)})
    assert not read_off(schema=SCHEMA)


# -- accuracy, exactly -------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [0.3, 1.0, 2.5, 17.0])
@pytest.mark.parametrize("confidence", [0.5, 0.9, 0.95, 0.999])
def test_discrete_laplace_half_width_is_the_smallest_integer_that_covers(
    scale: float, confidence: float
) -> None:
    q = math.exp(-1.0 / scale)
    t = int(discrete_laplace_half_width(scale, confidence))

    def covered(width: int) -> float:  # P(|Z| <= width), summed term by term
        return (1 - q) / (1 + q) * (1 + 2 * sum(q**z for z in range(1, width + 1)))

    assert covered(t) >= confidence - 1e-12
    assert t == 0 or covered(t - 1) < confidence


@pytest.mark.parametrize("scale", [0.5, 2.0])
def test_continuous_half_widths_and_stds(scale: float) -> None:
    assert laplace_half_width(scale, 0.95) == pytest.approx(stats.laplace(scale=scale).ppf(0.975))
    assert gaussian_half_width(scale, 0.95) == pytest.approx(stats.norm(scale=scale).ppf(0.975))
    assert noise_std("laplace", scale) == pytest.approx(stats.laplace(scale=scale).std())
    q = math.exp(-1.0 / scale)
    zs = np.arange(-400, 401)
    pmf = (1 - q) / (1 + q) * q ** np.abs(zs)
    assert noise_std("discrete laplace", scale) == pytest.approx(math.sqrt((pmf * zs**2).sum()))


def test_accuracy_keeps_the_shape_of_the_values() -> None:
    scales = {"h": pd.Series([2.0, 2.0], index=["u", "v"]), "s": 1.0}
    accuracy = Accuracy.of_scales("laplace", scales)
    assert list(accuracy.half_width["h"].index) == ["u", "v"]
    assert accuracy.half_width["s"] == pytest.approx(-math.log(0.05))
    with pytest.raises(ValueError, match="distribution must be one of"):
        Accuracy.of_scales("cauchy", 1.0)


def test_nested_parameters_are_set_and_got_as_scikit_learn_does() -> None:
    """``estimator__max_depth``: the assessor can be tuned with scikit-learn's tools."""
    from sklearn.tree import DecisionTreeClassifier

    from attrpriv.assess import FeatureRiskAssessor

    assessor = FeatureRiskAssessor(DecisionTreeClassifier(max_depth=3))
    assert assessor.get_params()["estimator__max_depth"] == 3
    assert "estimator__max_depth" not in assessor.get_params(deep=False)
    assessor.set_params(estimator__max_depth=5, threshold=0.1)
    assert assessor.estimator.max_depth == 5 and assessor.threshold == 0.1
    assert clone(assessor).estimator.max_depth == 5
    with pytest.raises(InputError, match="has no parameter 'estimatr'"):
        assessor.set_params(estimatr__max_depth=5)
    with pytest.raises(InputError, match="'threshold' has no parameters to set"):
        assessor.set_params(threshold__x=1)
