"""Parameter checks: every refusal is an InputError whose message names the parameter."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attrpriv._checks import (
    check_choice,
    check_delta,
    check_epsilon,
    check_finite_number,
    check_non_negative,
    check_positive,
    check_positive_int,
    check_probability,
)
from attrpriv.errors import InputError

# Things that are not real numbers at all (bools count as "not a number" here).
not_numbers = st.one_of(
    st.booleans(),
    st.text(max_size=5),
    st.none(),
    st.complex_numbers(),
    st.lists(st.floats(), max_size=2),
    st.just(np.bool_(True)),
    st.just(b"1"),
)
names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)


@given(value=st.floats(max_value=0.0) | st.integers(max_value=0), name=names)
def test_epsilon_refuses_non_positive(value: float, name: str) -> None:
    with pytest.raises(InputError, match=name):
        check_epsilon(value, name)


@given(value=st.sampled_from([math.inf, -math.inf, math.nan, np.float64("nan"), np.inf]))
def test_epsilon_refuses_non_finite(value: float) -> None:
    with pytest.raises(InputError, match=r"^epsilon must be a finite number"):
        check_epsilon(value)


@given(value=not_numbers, name=names)
def test_epsilon_refuses_non_numbers(value: object, name: str) -> None:
    with pytest.raises(InputError, match=f"^{name} must be a finite number"):
        check_epsilon(value, name)


@given(value=st.floats(min_value=0.0, exclude_min=True, max_value=1e-300, exclude_max=True))
def test_epsilon_refuses_a_value_whose_noise_scale_overflows(value: float) -> None:
    """1 / 1e-309 is not a float: the noise scale would be infinite (found only after the data
    was read, naming no parameter)."""
    with pytest.raises(InputError, match=r"^--epsilon must be at least 1e-300 \(the noise"):
        check_epsilon(value, "--epsilon")


@given(value=st.floats(min_value=1e-300, max_value=700.0) | st.integers(min_value=1, max_value=700))
def test_epsilon_accepts_positive_numbers_as_float(value: float) -> None:
    result = check_epsilon(value)
    assert type(result) is float
    assert result == value


@pytest.mark.parametrize("value", [np.float64(0.5), np.float32(2.0), np.int64(3), Fraction(1, 3)])
def test_numpy_and_fraction_scalars_are_numbers(value: object) -> None:
    assert check_epsilon(value) == pytest.approx(float(value))  # type: ignore[arg-type]


@given(
    value=st.floats(max_value=0.0, exclude_max=True) | st.floats(min_value=1.0) | st.just(math.nan),
    name=names,
)
def test_delta_refuses_outside_unit_interval(value: float, name: str) -> None:
    with pytest.raises(InputError, match=name):
        check_delta(value, name)


@given(value=st.floats(min_value=0.0, max_value=1.0, exclude_max=True))
def test_delta_accepts_zero_to_below_one(value: float) -> None:
    assert check_delta(value) == value


@given(value=not_numbers)
def test_delta_refuses_non_numbers(value: object) -> None:
    with pytest.raises(InputError, match=r"^delta "):
        check_delta(value)


def test_delta_bounds_exactly() -> None:
    assert check_delta(0) == 0.0
    with pytest.raises(InputError, match=r"delta must be in \[0, 1\), got 1.0"):
        check_delta(1.0)


@given(value=st.floats(allow_nan=True) | not_numbers)
def test_finite_number_accepts_exactly_finite_reals(value: object) -> None:
    finite_real = isinstance(value, float) and math.isfinite(value) and not isinstance(value, bool)
    if finite_real:
        assert check_finite_number(value, "x") == value
    else:
        with pytest.raises(InputError, match=r"^x must be a finite number"):
            check_finite_number(value, "x")


@given(value=st.floats(allow_nan=False, allow_infinity=False))
def test_positive_and_non_negative(value: float) -> None:
    if value > 0:
        assert check_positive(value, "scale") == value
    else:
        with pytest.raises(InputError, match=r"scale must be > 0"):
            check_positive(value, "scale")
    if value >= 0:
        assert check_non_negative(value, "scale") == value
    else:
        with pytest.raises(InputError, match=r"scale must be >= 0"):
            check_non_negative(value, "scale")


@given(value=st.integers(min_value=-5, max_value=50))
def test_positive_int_minimum(value: int) -> None:
    if value >= 20:
        assert check_positive_int(value, "n_samples", minimum=20) == value
    else:
        with pytest.raises(InputError, match=r"n_samples must be an integer >= 20"):
            check_positive_int(value, "n_samples", minimum=20)


@pytest.mark.parametrize("value", [True, 3.0, "3", None, np.bool_(True)])
def test_positive_int_refuses_non_integers(value: object) -> None:
    with pytest.raises(InputError, match=r"^trials must be an integer"):
        check_positive_int(value, "trials")


def test_positive_int_accepts_numpy_integers() -> None:
    result = check_positive_int(np.int64(7), "trials")
    assert result == 7 and type(result) is int


@pytest.mark.parametrize(
    ("value", "open_interval", "ok"),
    [
        (0.5, True, True),
        (0.0, True, False),
        (1.0, True, False),
        (0.0, False, True),
        (1.0, False, True),
    ],
)
def test_probability_interval(value: float, open_interval: bool, ok: bool) -> None:
    if ok:
        assert check_probability(value, "confidence", open_interval=open_interval) == value
    else:
        with pytest.raises(InputError, match=r"^confidence must be in"):
            check_probability(value, "confidence", open_interval=open_interval)


def test_choice_names_options() -> None:
    assert check_choice("b", "engine", ["a", "b"]) == "b"
    with pytest.raises(InputError, match=r"engine must be one of \['a', 'b'\], got 'c'"):
        check_choice("c", "engine", ("a", "b"))
