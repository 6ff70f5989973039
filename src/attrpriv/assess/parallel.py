"""Run a grid of independent pure tasks here, on joblib processes, or on Dask: same results."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from joblib import Parallel, delayed

from attrpriv._checks import check_choice, check_positive_int
from attrpriv._progress import progress
from attrpriv.assess.choices import BACKENDS
from attrpriv.errors import InputError

__all__ = ["check_n_jobs", "run_tasks"]


S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")


def check_n_jobs(n_jobs: object) -> int:
    """A worker count: an integer >= 1, or -1 for one per CPU (joblib's convention)."""
    if n_jobs == -1 and not isinstance(n_jobs, bool):
        return -1
    return check_positive_int(n_jobs, "n_jobs")


@contextmanager
def _progress(total: int, description: str, enabled: bool) -> Iterator[Callable[[], None]]:
    """Progress on stderr; yields a function to call per task."""
    with progress(description, total, enabled=enabled) as advance:
        yield lambda: advance()


def run_tasks(
    fn: Callable[[S, T], R],
    shared: S,
    tasks: Sequence[T],
    *,
    backend: str = "joblib",
    n_jobs: int = 2,
    progress: bool = False,
    description: str = "retraining",
) -> list[R]:
    """``[fn(shared, t) for t in tasks]`` on ``backend``, in order; ``fn`` must be module-level."""
    check_choice(backend, "backend", BACKENDS)
    n_jobs = check_n_jobs(n_jobs)
    with _progress(len(tasks), description, progress) as tick:
        if backend == "dask" and tasks:
            return _dask(fn, shared, tasks, n_jobs, tick)
        if backend == "sequential" or not tasks:
            stream: Iterable[R] = (fn(shared, task) for task in tasks)
        else:  # loky worker processes; results stream back in order
            parallel = Parallel(n_jobs=n_jobs, backend="loky", return_as="generator")
            stream = parallel(delayed(fn)(shared, task) for task in tasks)
        results = []
        for result in stream:  # each result ticks the bar
            results.append(result)
            tick()
        return results


def _distributed() -> Any:
    """The optional ``distributed`` module, or a clear error naming the extra to install."""
    try:
        import distributed
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise InputError(
            "backend='dask' needs dask.distributed: pip install 'attrpriv[distributed]'"
        ) from None
    return distributed


def _dask(
    fn: Callable[[S, T], R],
    shared: S,
    tasks: Sequence[T],
    n_jobs: int,
    tick: Callable[[], None],
) -> list[R]:
    """Scatter the shared data once, map the tasks, gather in order."""
    distributed = _distributed()
    try:
        client = distributed.get_client()
        owned = None
    except ValueError:
        workers = None if n_jobs == -1 else n_jobs
        owned = distributed.LocalCluster(
            n_workers=workers, threads_per_worker=1, dashboard_address=None
        )
        client = distributed.Client(owned)
    try:
        data = client.scatter(shared, broadcast=True, hash=False)
        futures = client.map(fn, [data] * len(tasks), list(tasks), pure=False)
        for _ in distributed.as_completed(futures):
            tick()
        results: list[R] = client.gather(futures)
        return results
    finally:
        if owned is not None:
            client.close()
            owned.close()
