"""Row selection (``attrpriv.data.RowSelection``): a range, a filter and a seeded sample."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attrpriv.data import RowSelection, read_data
from attrpriv.errors import InputError

FRAME = pd.DataFrame({"x": range(10), "split": ["a", "b"] * 5})


def test_range_then_filter_then_sample_in_that_order() -> None:
    assert RowSelection("2:8").table(FRAME)["x"].tolist() == [2, 3, 4, 5, 6, 7]
    assert RowSelection("::2", "split=a").table(FRAME)["x"].tolist() == [0, 2, 4, 6, 8]
    sample = RowSelection(where="split=b", rows=3, seed=1).table(FRAME)
    assert len(sample) == 3 and set(sample["split"]) == {"b"}
    assert sample.equals(FRAME[FRAME["split"] == "b"].sample(3, random_state=1))
    assert RowSelection(rows=50).table(FRAME).equals(FRAME)  # more than there are: all
    assert FRAME["x"].tolist() == list(range(10))  # the input is not changed


@pytest.mark.parametrize(
    ("selection", "message"),
    [
        (RowSelection("40000"), "START:STOP"),
        (RowSelection("9:3"), "selects no row of 'f'"),
        (RowSelection("-1:3"), "row numbers >= 0"),
        (RowSelection(where="split"), "COLUMN=VALUE"),
        (RowSelection(where="nope=1"), "'nope' is not a column of 'f'"),
        (RowSelection("1::2", "split=a"), "selects no row of 'f'"),
    ],
)
def test_a_bad_selection_is_one_line(selection: RowSelection, message: str) -> None:
    with pytest.raises(InputError, match=message):
        selection.table(FRAME, "f")


def test_rows_and_seed_are_checked_when_made() -> None:
    with pytest.raises(InputError, match="rows must be an integer >= 1"):
        RowSelection(rows=0)
    with pytest.raises(InputError, match="seed must be an integer >= 0"):
        RowSelection(seed=-1)


def test_images_are_selected_with_their_labels() -> None:
    images = np.arange(10).reshape(10, 1)
    labels = {"digit": np.array([0, 1] * 5), "id": np.arange(10)}
    chosen, kept = RowSelection("::2", "digit=0").images(images, labels)
    assert chosen.ravel().tolist() == [0, 2, 4, 6, 8] and kept["id"].tolist() == [0, 2, 4, 6, 8]
    chosen, kept = RowSelection(rows=4, seed=3).images(images, labels)
    expected = np.random.default_rng(3).choice(10, 4, replace=False)
    assert chosen.ravel().tolist() == expected.tolist() == kept["id"].tolist()
    with pytest.raises(InputError, match="label array 'colour' is not one of 'imgs'"):
        RowSelection(where="colour=red").images(images, labels, "imgs")


def test_read_data_selects_after_reading_and_checking(tmp_path) -> None:
    read = read_data("adult", select=RowSelection("0:100", "sex=Female"))
    whole = read_data("adult").frame.iloc[:100]
    assert read.frame.equals(whole[whole["sex"].astype(str) == "Female"])
