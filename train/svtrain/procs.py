"""Worker processes for the seeds of a run (--jobs): the matrix's and E2's."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
from typing import Any, Callable, Iterator


def in_workers(fn: Callable[..., Any], calls: list[tuple], jobs: int) -> Iterator[Any]:
    """fn(*args) for every args of calls in up to jobs worker processes,
    yielding the results in the order of calls (a worker's exception is
    raised when its turn comes). Spawned, not forked: a CUDA context and
    torch's thread pools do not survive a fork; fn and its arguments are
    pickled, so fn is a module-level function."""
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, min(jobs, len(calls))), mp_context=ctx) as pool:
        futs = [pool.submit(fn, *args) for args in calls]
        for f in futs:
            yield f.result()
