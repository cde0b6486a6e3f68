"""Explore trials side by side: each worker is a process of its own with its own kept cluster
(harness.explore.cluster_pool) and its own checks' session, serving one trial at a time.

Why processes and not threads: a cell stops its clients and removes its cluster when Ctrl-C
reaches it as KeyboardInterrupt, and only a process's main thread ever gets one. Each worker
runs in a session of its own, so an interrupt reaches the explore process alone (from the
terminal or `kill -INT`) and `close` passes it on, once, to each worker with a trial under
way: its running cell stops as a cell run alone does, and its kept cluster goes. A worker whose parent died (SIGKILL) sends
itself SIGTERM (the cluster's guard turns it into a clean exit), and each cluster's
watchdog covers the worker's own SIGKILL (harness.nodes.watchdog).

Why two, on two cores: a trial on a kept cluster is a light workload (the machine ~40 % busy
in its middle); the cost of a trial is its workload's length, which no trimming shortens.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from harness.explore.search import TrialRun
from harness.runner.status import Reporter
from harness.spec import Cell
from harness.spec.explore_roles import Entry

PARENT_POLL_S = 1.0
STOP_S = 180.0  # a worker's running cell stopped and its cluster removed, at most


@dataclass(frozen=True)
class WorkerSetup:
    """What each worker builds its trial runner from (harness.explore.trial.plan_runner)."""

    spec_path: Path
    seed: int
    out: Path
    reuse: bool
    small_cells: bool
    # Makes the worker's reporter of its cells' progress (the CLI's CellProgress: a class, so
    # it crosses to the spawned process by name; explore does not import the CLI).
    reporter: Callable[[], Reporter]


def serve_trials(conn: Connection, setup: WorkerSetup, parent: int) -> None:
    """A worker's life: trials in, outcomes out, until told to stop or its parent is gone;
    then its kept cluster is removed and what its pool did is sent back."""
    from contextlib import closing

    from harness.explore.cluster_pool import ClusterPool
    from harness.explore.trial import plan_runner
    from harness.verdict.run_verify import spark_checks

    os.setsid()  # a Ctrl-C at the terminal reaches the explore process only: `close` passes it
    threading.Thread(target=_orphaned, args=(parent,), name="parent-watch", daemon=True).start()
    pool = ClusterPool(enabled=setup.reuse)
    try:
        with spark_checks(small=setup.small_cells) as checks, closing(pool):
            run = plan_runner(
                setup.spec_path, setup.seed, setup.out, setup.reporter(), checks, pool=pool
            )
            while True:
                try:
                    job = conn.recv()
                except EOFError:  # the explore process is gone
                    break
                if job is None:
                    break
                cell, faults, label = job
                conn.send(("trial", label, run(cell, faults, label)))
        conn.send(("pool", pool.describe()))
    except KeyboardInterrupt:  # Ctrl-C: the cell stopped itself, the pool closed its cluster
        pass
    except (BrokenPipeError, EOFError, OSError):
        pass


def _orphaned(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os.kill(os.getpid(), signal.SIGTERM)


@dataclass
class _Worker:
    process: Any  # multiprocessing's SpawnProcess
    conn: Connection
    busy: Future[TrialRun] | None = None
    gone: bool = False  # its pipe closed: it ended (is_alive() may not say so yet)
    pool: dict[str, Any] = field(default_factory=dict)
    reader: threading.Thread | None = None


class TrialWorkers:
    """`n` worker processes; `start` hands a trial to an idle one, `run` waits for it."""

    def __init__(
        self, n: int, setup: WorkerSetup, serve: Callable[..., None] = serve_trials
    ) -> None:
        """`serve`: a worker's life (a test passes one that runs no cluster: a module-level
        function, which a spawned process can import)."""
        ctx = multiprocessing.get_context("spawn")  # no fork of a process with threads
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._workers: list[_Worker] = []
        for i in range(n):
            ours, theirs = ctx.Pipe()
            process = ctx.Process(
                target=serve, args=(theirs, setup, os.getpid()), name=f"explore-worker-{i}"
            )
            process.start()
            theirs.close()
            worker = _Worker(process, ours)
            worker.reader = threading.Thread(
                target=self._read, args=(worker,), name=f"explore-reader-{i}", daemon=True
            )
            worker.reader.start()
            self._workers.append(worker)

    def start(self, cell: Cell, faults: list[Entry], label: str) -> Future[TrialRun]:
        """The trial sent to the first idle worker (waits for one)."""
        with self._idle:
            while True:
                idle = [w for w in self._workers if w.busy is None and not w.gone]
                if idle:
                    worker = idle[0]
                    try:
                        worker.conn.send((cell, faults, label))
                    except OSError:  # it ended since (its reader will say so)
                        worker.gone = True
                        continue
                    worker.busy = Future()
                    return worker.busy
                if all(w.gone for w in self._workers):
                    raise RuntimeError("every explore worker has stopped")
                self._idle.wait(PARENT_POLL_S)

    def run(self, cell: Cell, faults: list[Entry], label: str) -> TrialRun:
        return self.start(cell, faults, label).result()

    def _read(self, worker: _Worker) -> None:
        """A worker's messages, until it ends: a trial's outcome ends its `busy`."""
        while True:
            try:
                kind, *rest = worker.conn.recv()
            except (EOFError, OSError):
                break
            with self._idle:
                if kind == "trial" and worker.busy is not None:
                    worker.busy.set_result(rest[1])
                    worker.busy = None
                elif kind == "pool":
                    worker.pool = rest[0]
                self._idle.notify_all()
        with self._idle:  # it died with a trial under way: that trial is lost, not the run
            worker.gone = True
            if worker.busy is not None and not worker.busy.done():
                worker.busy.set_result(
                    TrialRun([], "unknown", None, "explore worker stopped during the trial")
                )
            worker.busy = None
            self._idle.notify_all()

    def close(self) -> None:
        """Every worker told to stop (a running one interrupted: its cell stops as at a
        Ctrl-C) and waited for; its kept cluster is removed before it ends."""
        for worker in self._workers:
            with contextlib.suppress(OSError):
                worker.conn.send(None)
        deadline = time.monotonic() + STOP_S
        for worker in self._workers:
            if worker.busy is not None and worker.process.is_alive():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(worker.process.pid, signal.SIGINT)
        for worker in self._workers:
            worker.process.join(max(0.0, deadline - time.monotonic()))
            if worker.process.is_alive():  # its cluster's watchdog removes what it left
                worker.process.kill()
                worker.process.join()
            if worker.reader is not None:
                worker.reader.join(PARENT_POLL_S)
            worker.conn.close()

    def describe(self) -> dict[str, Any]:
        """The workers' pools summed: fresh clusters, reused ones, why one was not taken."""
        out: dict[str, Any] = {"fresh": 0, "reused": 0, "not_reused": []}
        for worker in self._workers:
            out["fresh"] += int(worker.pool.get("fresh", 0))
            out["reused"] += int(worker.pool.get("reused", 0))
            out["not_reused"] += list(worker.pool.get("not_reused", []))
        return out
