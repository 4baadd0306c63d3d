"""The process's own set-up (torch threads and kernels, signals), and
worker processes for the seeds of a run (--jobs): the matrix's and E2's."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import signal
from typing import Any, Callable, Iterator

import torch


def configure_torch(threads: int, device: str | None) -> None:
    """Thread count, and on a GPU the deterministic kernels where torch has
    them (warn_only: an op without one still runs, and says so). cuBLAS
    needs its workspace fixed before the first CUDA call for that."""
    torch.set_num_threads(threads)
    if device and device.startswith("cuda"):
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.backends.cudnn.benchmark = False


def exit_on_signals() -> None:
    """SIGTERM and SIGHUP (a job scheduler's stop, a closed terminal) end the
    run as an exception does: Python's default action kills the process at
    once, skipping the finally blocks that stop the `svbench serve` child,
    which was left running (a checkpointed run resumes either way)."""
    def stop(signum, _frame):
        raise SystemExit(128 + signum)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)


def _in_worker(threads: int, device: str | None, fn: Callable[..., Any], args: tuple) -> Any:
    exit_on_signals()
    configure_torch(threads, device)
    return fn(*args)


def in_workers(fn: Callable[..., Any], calls: list[tuple], jobs: int, threads: int, device: str | None) -> Iterator[Any]:
    """fn(*args) for every args of calls in up to jobs worker processes, each
    set up as the parent was (signals, threads, device), yielding the results
    in the order of calls (a worker's exception is raised when its turn
    comes). Spawned, not forked: a CUDA context and torch's thread pools do
    not survive a fork; fn and its arguments are pickled, so fn is a
    module-level function."""
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, min(jobs, len(calls))), mp_context=ctx) as pool:
        futs = [pool.submit(_in_worker, threads, device, fn, args) for args in calls]
        for f in futs:
            yield f.result()
