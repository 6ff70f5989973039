"""torch's own thread pool oversubscribes a busy 2-core machine (5x slower): one thread."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def one_torch_thread() -> Iterator[None]:
    try:
        import torch
    except ImportError:  # the sanitize extra is not installed: its tests skip themselves
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
