"""A command's outputs: checked before work, written all or nothing, earlier files put back."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from attrpriv.cli._outputs import Outputs, check_out_path, check_work_folder
from attrpriv.errors import InputError


def text(content: str) -> Callable[[Path], None]:
    def write(tmp: Path) -> None:
        tmp.write_text(content)

    return write


def failing(tmp: Path) -> None:
    tmp.write_text("half")
    raise OSError(28, "No space left on device")


def test_every_output_is_written(tmp_path: Path) -> None:
    outputs = Outputs()
    outputs.add("--out", tmp_path / "a.json")
    outputs.add("--html", tmp_path / "new" / "deeper" / "a.html")
    outputs.add("--key-out", tmp_path / "key.hex", private=True)
    written = outputs.write(
        {"--out": text("{}"), "--html": text("<html>"), "--key-out": text("ab")}
    )
    assert written == [tmp_path / "a.json", tmp_path / "new" / "deeper" / "a.html",
                       tmp_path / "key.hex"]  # fmt: skip
    assert (tmp_path / "new" / "deeper" / "a.html").read_text() == "<html>"
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == 0o666 & ~umask
    assert stat.S_IMODE((tmp_path / "key.hex").stat().st_mode) == 0o600  # owner only
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "key.hex", "new"]


def test_a_failed_write_takes_back_every_output(tmp_path: Path) -> None:
    old = tmp_path / "a.json"
    old.write_text("old")
    outputs = Outputs()
    outputs.add("--out", old)
    outputs.add("--html", tmp_path / "made" / "for" / "it.html")
    outputs.add("--record", tmp_path / "r.json")
    with pytest.raises(InputError, match=r"cannot write --html '.*it.html': No space left"):
        outputs.write({"--out": text("new"), "--html": failing, "--record": text("r")})
    assert old.read_text() == "old"  # the earlier file is back as it was
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]  # no temp files, no folder


def test_any_failure_takes_back_the_outputs_and_propagates(tmp_path: Path) -> None:
    def broken(tmp: Path) -> None:
        raise ValueError("a bug, not bad input")

    outputs = Outputs()
    outputs.add("--out", tmp_path / "a.json")
    outputs.add("--html", tmp_path / "a.html")
    with pytest.raises(ValueError, match="a bug"):
        outputs.write({"--out": text("{}"), "--html": broken})
    assert list(tmp_path.iterdir()) == []


def test_a_folder_output_replaces_the_old_folder_or_keeps_it(tmp_path: Path) -> None:
    folder = tmp_path / "dec"
    folder.mkdir()
    (folder / "old.txt").write_text("old")

    def model(tmp: Path) -> None:
        (tmp / "weights.pt").write_text("w")

    outputs = Outputs()
    outputs.add("--out", folder, folder=True)
    outputs.add("--record", tmp_path / "r.json")
    with pytest.raises(InputError, match="cannot write --record"):
        outputs.write({"--out": model, "--record": failing})
    assert sorted(p.name for p in folder.iterdir()) == ["old.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dec"]
    outputs.write({"--out": model, "--record": text("{}")})
    assert sorted(p.name for p in folder.iterdir()) == ["weights.pt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dec", "r.json"]


@pytest.mark.parametrize(
    ("path", "folder", "message"),
    [
        ("{tmp}", False, "is a directory; expected a file path"),
        ("{tmp}/file", True, "is an existing file; expected a directory"),
        ("{tmp}/file/below.json", False, "is a file, not a directory"),
    ],
)
def test_paths_that_cannot_be_outputs(
    tmp_path: Path, path: str, folder: bool, message: str
) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match=message):
        check_out_path(Path(path.format(tmp=tmp_path)), "--out", folder=folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_two_options_may_not_name_one_file(tmp_path: Path) -> None:
    outputs = Outputs()
    outputs.add("--out", tmp_path / "x.json")
    with pytest.raises(InputError, match="--out and --html are the same file"):
        outputs.add("--html", tmp_path / "." / "x.json")


def test_the_folders_made_for_outputs_are_named(tmp_path: Path) -> None:
    outputs = Outputs()
    outputs.add("--out", tmp_path / "a.json")
    outputs.add("--html", tmp_path / "new" / "deeper" / "a.html")
    outputs.add("--record", tmp_path / "new" / "r.json")  # its folder is made for --html
    outputs.write({"--out": text("{}"), "--html": text("<html>"), "--record": text("{}")})
    assert outputs.made == {"--html": tmp_path / "new" / "deeper"}


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("{tmp}/file", "is an existing file; expected a directory"),
        ("{tmp}/file/below", "is a file, not a directory"),
        ("{tmp}/loop", "'{tmp}/loop' is a symbolic link that leads nowhere"),
        ("{tmp}/loop/below", ": '{tmp}/loop' is a symbolic link that leads nowhere"),
        ("{tmp}/dangling", "is a symbolic link that leads nowhere (a loop, or a missing target)"),
    ],
)
def test_work_folders_that_cannot_be_filled(tmp_path: Path, path: str, message: str) -> None:
    (tmp_path / "file").write_text("x")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(InputError, match=re.escape(message.format(tmp=tmp_path))):
        check_work_folder(Path(path.format(tmp=tmp_path)), "--checkpoint")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling", "file", "loop"]


def test_a_work_folder_may_exist_or_be_made(tmp_path: Path) -> None:
    check_work_folder(None, "--checkpoint")
    check_work_folder(tmp_path, "--checkpoint")  # a rerun resumes in it
    check_work_folder(tmp_path / "new" / "deeper", "--checkpoint")
    assert list(tmp_path.iterdir()) == []  # checking makes nothing
    if os.geteuid() != 0:  # root writes anywhere
        tmp_path.chmod(0o555)
        try:
            with pytest.raises(InputError, match="no file can be made in"):
                check_work_folder(tmp_path, "--checkpoint")
        finally:
            tmp_path.chmod(0o755)
