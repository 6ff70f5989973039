"""The files one command writes: checked before any work, written all or nothing.

A command names its outputs first (:meth:`Outputs.add`: each path is checked at once, so a
location that cannot be written is refused before any data is read, any model trained or any
budget charged), computes everything, then writes them together (:meth:`Outputs.write`): each
one into a temporary file beside its target, and only when every one is written are they all
renamed into place. If any write fails, every output of the command is removed again (earlier
files put back as they were), together with any folder made for them, and the failure is one
:class:`~attrpriv.errors.InputError` line naming the option.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from attrpriv.errors import InputError

__all__ = ["Outputs", "Writer", "check_out_path", "check_work_folder", "check_writable_folder"]

Writer = Callable[[Path], None]
"""Writes one output to the temporary path it is given (a file, or a folder for folders)."""


def check_writable_folder(path: Path, option: str) -> None:
    """Refuse ``path`` unless files can be created where it would go.

    The nearest existing folder above it must be a folder in which a file can be made (tried
    with a temporary file, removed at once: permissions, read-only file systems and special
    folders all answer the same way).
    """
    parent = next((p for p in path.parents if os.path.lexists(p)), Path())
    _refuse_dangling_link(parent, option, path)
    if not parent.is_dir():
        raise InputError(f"{option} {str(path)!r}: {str(parent)!r} is a file, not a directory")
    _probe(parent, option, path)


def check_work_folder(path: Path | None, option: str) -> None:
    """Refuse a folder that a command fills as it works (``--checkpoint``), before any work.

    The folder may exist (a rerun resumes from it): then it must be a directory in which a
    file can be made. A missing one is made by the command, so the nearest existing folder
    above it must be writable (:func:`check_writable_folder`). A symbolic link that leads
    nowhere (a loop, a missing target) and an existing file are refused.

    Parameters
    ----------
    path : pathlib.Path or None
        The folder; ``None`` checks nothing.
    option : str
        The option that named it, for the message.

    Raises
    ------
    InputError
        Nothing could be written in ``path``; the message names ``option``.
    """
    if path is None:
        return
    _refuse_dangling_link(path, option, path)
    if path.exists() and not path.is_dir():
        raise InputError(f"{option} {str(path)!r} is an existing file; expected a directory")
    if path.is_dir():
        _probe(path, option, path)
    else:
        check_writable_folder(path, option)


def _refuse_dangling_link(link: Path, option: str, path: Path) -> None:
    """Refuse ``link`` if it is a symbolic link that resolves to nothing (a loop, or a link to
    a missing file): nothing can be written through it."""
    if link.is_symlink() and not link.exists():
        where = "" if link == path else f": {str(link)!r}"
        raise InputError(
            f"{option} {str(path)!r}{where} is a symbolic link that leads nowhere (a loop, or "
            "a missing target)"
        )


def _probe(folder: Path, option: str, path: Path) -> None:
    """Refuse ``folder`` unless a file can be made in it (a temporary one, removed at once)."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".attrpriv-probe-", dir=folder)
    except OSError as exc:
        raise InputError(
            f"{option} {str(path)!r} cannot be written: no file can be made in {str(folder)!r} "
            f"({exc.strerror or exc})"
        ) from None
    os.close(fd)
    Path(probe).unlink(missing_ok=True)


def check_out_path(path: Path | None, option: str, *, folder: bool = False) -> None:
    """Refuse an output path that cannot be written, before any work is done.

    A file output must not be a folder; a folder output (``folder=True``) must not be a file.
    Missing parent folders are made when the output is written (the command says so: see
    :attr:`Outputs.made`), so the nearest existing one must be a folder one can write in.
    """
    if path is None:
        return
    if folder and path.exists() and not path.is_dir():
        raise InputError(f"{option} {str(path)!r} is an existing file; expected a directory")
    if not folder and path.is_dir():
        raise InputError(f"{option} {str(path)!r} is a directory; expected a file path")
    check_writable_folder(path, option)


@dataclass
class _Staged:
    option: str
    target: Path
    tmp: Path
    made: list[Path]  # folders made for it, deepest last
    backup: Path | None = None
    placed: bool = False


@dataclass
class Outputs:
    """The outputs of one command, by option name (``"--out"``, ``"--html"``, ...)."""

    paths: dict[str, Path] = field(default_factory=dict)
    folders: set[str] = field(default_factory=set)
    private: set[str] = field(default_factory=set)
    made: dict[str, Path] = field(default_factory=dict)
    """After :meth:`write`: by option, the deepest missing folder that was made for it."""

    def add(
        self, option: str, path: Path | None, *, folder: bool = False, private: bool = False
    ) -> Path | None:
        """Check ``path`` (see :func:`check_out_path`) and plan it; ``None`` plans nothing.

        ``folder``: the output is a directory. ``private``: only its owner may read it (a key);
        other outputs get the usual permissions (the umask's). Two options may not name the
        same file.
        """
        if path is None:
            return None
        check_out_path(path, option, folder=folder)
        for other, planned in self.paths.items():
            if planned.absolute() == path.absolute() or planned.resolve() == path.resolve():
                raise InputError(f"{other} and {option} are the same file {str(path)!r}")
        self.paths[option] = path
        if folder:
            self.folders.add(option)
        if private:
            self.private.add(option)
        return path

    def write(self, writers: Mapping[str, Writer]) -> list[Path]:
        """Write every planned output whose option has a writer; all of them, or none.

        Returns the paths written, in the order of ``writers``.
        """
        staged: list[_Staged] = []
        current = ""
        try:
            for option, writer in writers.items():
                current = option
                entry = self._stage(option)
                staged.append(entry)
                writer(entry.tmp)
            for entry in staged:
                current = entry.option
                _place(entry)
        except OSError as exc:
            _undo(staged)
            where = f"{current} {str(self.paths[current])!r}" if current else "an output"
            raise InputError(f"cannot write {where}: {exc.strerror or exc}") from None
        except BaseException:
            _undo(staged)
            raise
        for entry in staged:
            _discard(entry.backup)
            if entry.made:
                self.made[entry.option] = entry.made[-1]
        return [entry.target for entry in staged]

    def _stage(self, option: str) -> _Staged:
        target = self.paths[option]
        made = _make_parents(target.parent)
        entry = _Staged(option, target, target, made)
        try:
            if option in self.folders:
                entry.tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
            else:
                fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                            dir=target.parent)  # fmt: skip
                os.close(fd)
                entry.tmp = Path(name)
        except OSError:
            _remove_folders(made)
            raise
        if option not in self.private:  # temporary files are owner-only; outputs need not be
            entry.tmp.chmod((0o777 if option in self.folders else 0o666) & ~_umask())
        return entry


def _umask() -> int:
    """The process's file-creation mask (read by setting it, then putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _make_parents(folder: Path) -> list[Path]:
    """Make ``folder`` and its missing parents; return those made, outermost first."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()][::-1]
    for path in missing:
        path.mkdir()
    return missing


def _place(entry: _Staged) -> None:
    """Move the written output onto its target, keeping what was there as a backup."""
    target = entry.target
    if target.is_dir() and not target.is_symlink():
        entry.backup = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
        entry.backup.rmdir()
        target.rename(entry.backup)
    elif target.exists():  # a second name for the old file: the target never goes missing
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.old.", dir=target.parent)
        os.close(fd)
        entry.backup = Path(name)
        entry.backup.unlink()
        try:
            os.link(target, entry.backup)
        except OSError:  # a file system without hard links
            shutil.copy2(target, entry.backup)
    entry.tmp.replace(target)
    entry.placed = True


def _undo(staged: list[_Staged]) -> None:
    """Take every output of the command back: put backups in place, remove the rest."""
    for entry in reversed(staged):
        if entry.placed:
            _discard(entry.target)
        if entry.backup is not None and entry.backup.exists():
            entry.backup.replace(entry.target)
        if entry.tmp != entry.target:
            _discard(entry.tmp)
        _remove_folders(entry.made)


def _discard(path: Path | None) -> None:
    if path is None or not (path.exists() or path.is_symlink()):
        return
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _remove_folders(made: list[Path]) -> None:
    """Remove the folders made for an output (innermost first), if they are empty."""
    for folder in reversed(made):
        try:
            folder.rmdir()
        except OSError:
            return
