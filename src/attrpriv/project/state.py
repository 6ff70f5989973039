"""The state folder of a project: one folder per step, finished when its ``DONE.json`` says so.

A step's outputs are written atomically (a temporary file renamed into place) and its
``DONE.json`` last, naming each output's sha256: a step killed at any point has no valid
``DONE.json`` and runs again; a finished one is never redone while its digest holds. One runner
at a time holds the folder's lock. See docs/project.md.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from attrpriv._io import atomic_write_json
from attrpriv.errors import InputError

DONE = "DONE.json"


@dataclass(frozen=True)
class Done:
    """A finished step: its ``digest`` (what it was run from), its ``outputs`` (file name ->
    sha256), the ledger entries it ``charges``, when it ``finished`` and with which attrpriv."""

    step: str
    digest: str
    outputs: Mapping[str, str]
    charges: tuple[int, ...]
    finished: str
    version: str

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "digest": self.digest, "outputs": dict(self.outputs),
                "charges": list(self.charges), "finished": self.finished,
                "version": self.version}  # fmt: skip


def sha256_of(path: Path) -> str:
    """The sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class ProjectState:
    """The folder that keeps a project's finished steps (``steps/<step>/``) and its lock."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def step_folder(self, step: str) -> Path:
        """``steps/<step>`` (``release:hist`` -> ``release-hist``)."""
        return self.folder / "steps" / step.replace(":", "-")

    def done(self, step: str) -> Done | None:
        """The step's ``DONE.json`` when it parses and every output it lists has its sha256."""
        folder = self.step_folder(step)
        try:
            raw = json.loads((folder / DONE).read_text(encoding="utf-8"))
            done = Done(str(raw["step"]), str(raw["digest"]), dict(raw["outputs"]),
                        tuple(int(i) for i in raw["charges"]), str(raw["finished"]),
                        str(raw["version"]))  # fmt: skip
        except (OSError, ValueError, KeyError, TypeError):
            return None
        for name, digest in done.outputs.items():
            path = folder / name
            if not path.is_file() or sha256_of(path) != digest:
                return None
        return done

    def finish(
        self, step: str, digest: str, outputs: Sequence[str], charges: Sequence[int]
    ) -> Done:
        """Write the step's ``DONE.json`` (last: its outputs are already in place)."""
        folder = self.step_folder(step)
        finished = datetime.now(UTC).isoformat(timespec="seconds")
        hashes = {n: sha256_of(folder / n) for n in outputs}
        done = Done(step, digest, hashes, tuple(charges), finished, version("attrpriv"))
        atomic_write_json(folder / DONE, done.to_dict())
        return done

    def forget(self, step: str) -> None:
        """Remove a step's ``DONE.json`` (it will run again) and temporary files left by a kill."""
        folder = self.step_folder(step)
        (folder / DONE).unlink(missing_ok=True)
        for left in folder.glob(".*.tmp"):
            left.unlink(missing_ok=True)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the folder's lock (another runner on the same project is refused)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.folder / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
                raise InputError(
                    f"the project in {str(self.folder)!r} is being run by another process (pid "
                    f"{holder}); wait for it to finish"
                ) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
            yield
        finally:
            os.close(fd)  # closing releases the lock; a killed holder's is released by the OS
