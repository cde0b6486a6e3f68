"""The producer process, as the runner sees it: started, SIGKILLed, paused, restarted, collected.

Same face as the thread (harness.workload.producer.thread: start, stop, join, running, counts,
write), plus what the nemesis does to it (harness.faults.producer). Each process is
harness.workload.producer.member, given the spec's producer part and the Runtime as they
are. A restart is a new incarnation (`p1`, `p2`, ...) that goes on from the next seq and
transaction number and keeps the schedule's end: the rate and the end are the workload's,
not the process's. A crashed transactional producer is always restarted at heal, even past
its end: its `init_transactions` fences the dead one and aborts its open transaction, which
would otherwise hold every read_committed reader back until `transaction.timeout.ms`.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.common.processes import ManagedProcess
from harness.results import events as ev
from harness.results.csv_tables import whole_chunks
from harness.results.history import History, now_ms
from harness.results.ledger_join import write_ledger
from harness.results.member_files import read_json_lines, whole_lines
from harness.results.producer_files import (
    IncarnationPaths,
    incarnation_name,
    incarnations,
    last_numbers,
)
from harness.spec.producer import ProducerSpec
from harness.workload.java import producer as java_producer
from harness.workload.producer.core import NO_END_MS
from harness.workload.runtime import Runtime

MEMBER = "harness.workload.producer.member"  # the process (its docstring: the CLI)
PAUSE_GUARD = "harness.workload.producer.pause_guard"
STOP_GRACE_S = 90.0  # SIGTERM: the open transaction ends, the queue flushes
PAUSE_GUARD_MAX_S = 6 * 3600.0  # a pause outlasting any cell is let go


@dataclass
class _Tail:
    """Counts lines of a growing file from where it was last read (a chunk at a time)."""

    path: Path
    position: int = 0
    lines: int = 0
    ok: int = 0

    def poll(self, count_ok: bool = False) -> None:
        for chunk, position in whole_chunks(self.path, self.position):
            self.position = position
            self.lines += chunk.count(b"\n")
            if count_ok:
                self.ok += chunk.count(b",ok,")


@dataclass
class ProducerSupervisor:
    spec: ProducerSpec
    runtime: Runtime  # its directory: the cell's producer/, every incarnation's files
    history: History
    crashed: BaseException | None = None
    _procs: list[ManagedProcess] = field(default_factory=list)
    _tails: list[tuple[_Tail, _Tail]] = field(default_factory=list)
    _end_ms: int = 0
    _killed: set[int] = field(default_factory=set)  # incarnations the nemesis SIGKILLed
    _paused: bool = False
    _guard: ManagedProcess | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    # A Java producer's incarnations print events, followed into the usual files on reads.
    _java: list[java_producer.JavaIncarnation] = field(default_factory=list)
    # Its environment at each launch (a fake clock: harness.workload.clocks); None: the runner's.
    env: Callable[[], dict[str, str]] | None = None

    @property
    def directory(self) -> Path:
        return self.runtime.directory

    # --- the thread's face ------------------------------------------------------------------
    def start(self) -> ProducerSupervisor:
        self.directory.mkdir(parents=True, exist_ok=True)
        duration_s = self.spec.duration_s
        self._end_ms = now_ms() + (int(duration_s * 1000) if duration_s is not None else NO_END_MS)
        self._launch(first_seq=0, first_txn=0)
        return self

    @property
    def running(self) -> bool:
        """Its latest process runs (or is paused). A killed one is not running: the runner
        waits for the nemesis anyway while a restart is planned, and one restarted only at
        heal must not hold the workload phase open."""
        proc = self._procs[-1] if self._procs else None
        if proc is None:
            return False
        if proc.running:
            return True
        self._note_exit(len(self._procs) - 1, proc)
        return False

    def stop(self) -> None:
        self.resume()
        for proc in self._procs:
            proc.terminate()

    def join(self, timeout: float | None = None) -> None:
        for index, proc in enumerate(self._procs):
            if not proc.wait(STOP_GRACE_S if timeout is None else timeout):
                proc.kill()
                self.history.append(
                    ev.PRODUCER_CRASH,
                    producer=incarnation_name(index),
                    error="did not stop on SIGTERM within the grace period",
                )
            self._note_exit(index, proc)

    @property
    def attempted(self) -> int:
        self._poll()
        return sum(s.lines for s, _ in self._tails)

    @property
    def acked(self) -> int:
        self._poll()
        return sum(a.ok for _, a in self._tails)

    @property
    def failed(self) -> int:
        self._poll()
        return sum(a.lines - a.ok for _, a in self._tails)

    def write(self, path: Path) -> int:
        """The ledger from every incarnation's files (call after join()); the processes'
        own events join the history."""
        self._follow()
        for inc in incarnations(self.directory):
            self.history.merge(read_json_lines(inc.events))
        return write_ledger(path, incarnations(self.directory))

    # --- what the nemesis does ------------------------------------------------------------
    def crash(self) -> None:
        """SIGKILL: no commit, no abort, no flush — the transaction is left open."""
        with self._lock:
            index = len(self._procs) - 1
            proc = self._procs[index]
            if not proc.running:
                self.history.append(
                    ev.PRODUCER_KILL, producer=incarnation_name(index), note="was not running"
                )
                return
            self._killed.add(index)
            proc.kill()
            self._paused = False
            if self._guard is not None:
                self._guard.stop(5)
                self._guard = None
            self.history.append(ev.PRODUCER_KILL, producer=incarnation_name(index), pid=proc.pid)

    def restart(self) -> None:
        """A new incarnation after the last one's seq and transaction (if none runs)."""
        with self._lock:
            if self._procs and self._procs[-1].running:
                return
            self._follow()
            last_seq, last_txn = last_numbers(self.directory)
            self._launch(first_seq=last_seq + 1, first_txn=last_txn + 1)

    def pause(self) -> None:
        with self._lock:
            if self._procs and self._procs[-1].running:
                proc = self._procs[-1]
                # Started before the SIGSTOP: if the runner dies while the producer is
                # stopped, the guard lets it run again so it can end by itself.
                guard = [sys.executable, "-m", PAUSE_GUARD, str(proc.pid)]
                limits = [str(PAUSE_GUARD_MAX_S), str(os.getpid())]
                self._guard = ManagedProcess([*guard, *limits]).start()
                proc.pause()
                self._paused = True
                self.history.append(
                    ev.PRODUCER_PAUSE, producer=incarnation_name(len(self._procs) - 1)
                )

    def resume(self) -> None:
        with self._lock:
            if self._paused and self._procs:
                if self._guard is not None:
                    self._guard.stop(5)
                    self._guard = None
                self._procs[-1].resume()
                self._paused = False
                self.history.append(
                    ev.PRODUCER_RESUME, producer=incarnation_name(len(self._procs) - 1)
                )

    # --- inside ---------------------------------------------------------------------------------
    def argv(self, name: str, first_seq: int, first_txn: int) -> list[str]:
        """The command of incarnation `name` (harness.workload.producer.member's CLI, or
        the Java producer's)."""
        if self.spec.client == "java":
            paths = IncarnationPaths(self.directory, name)
            return java_producer.command(self.spec, self.runtime, paths, first_seq, self._end_ms)
        return [
            sys.executable,
            "-m",
            MEMBER,
            "--spec",
            self.spec.model_dump_json(),
            "--runtime",
            self.runtime.to_json(),
            "--name",
            name,
            "--first-seq",
            str(first_seq),
            "--first-txn",
            str(first_txn),
            "--end-ms",
            str(self._end_ms),
        ]

    def _launch(self, first_seq: int, first_txn: int) -> None:
        index = len(self._procs)
        paths = IncarnationPaths(self.directory, incarnation_name(index))
        argv = self.argv(paths.name, first_seq, first_txn)
        stdout = None
        if self.spec.client == "java":
            stdout = java_producer.stdout_path(paths)
            self._java.append(java_producer.JavaIncarnation(self.spec, paths))
            paths.sends.touch()  # an incarnation is known by its sends file
        proc = ManagedProcess(argv, paths.stderr, stdout, env=self.env).start()
        self._procs.append(proc)
        self._tails.append((_Tail(paths.sends), _Tail(paths.acks)))
        self.history.append(
            ev.PRODUCER_LAUNCH, producer=paths.name, pid=proc.pid, first_seq=first_seq
        )

    def _follow(self) -> None:
        for incarnation in self._java:
            incarnation.poll()

    def _poll(self) -> None:
        self._follow()
        for sends, acks in self._tails:
            sends.poll()
            acks.poll(count_ok=True)

    def _note_exit(self, index: int, proc: ManagedProcess) -> None:
        """A process that ended by itself with an error broke the workload (unknown)."""
        code = proc.returncode
        if code in (None, 0) or index in self._killed or self.crashed is not None:
            return
        tail = whole_lines(IncarnationPaths(self.directory, incarnation_name(index)).stderr)[-5:]
        self.crashed = RuntimeError(
            f"producer {incarnation_name(index)} exited {code}: {' | '.join(tail)}"
        )
        self.history.append(
            ev.PRODUCER_CRASH, producer=incarnation_name(index), error=str(self.crashed)
        )
