"""One managed child process: its own session, stderr to a file, stopped as a whole group.

Used for the consumer-group members, the Spark query process and the cluster's
watchdog. Each child runs in its own session (so its own process group): a
Ctrl-C at the terminal reaches only the runner, which stops its children itself,
and a SIGKILL of the group takes everything the child started (Spark's JVM).

The death of the parent stops the child from the child's side: the programs run
this way watch their parent pid (`os.getppid()` changes when the runner dies and
the child is re-parented) and are bounded by `--max-s`. `prctl(PR_SET_PDEATHSIG)`
is not used on purpose: it fires when the parent *thread* that forked the child
ends, and the nemesis restarts crashed members from short-lived threads.

A child's group is swept (SIGKILL, once) right when the child is reaped, never later:
once a group is empty its id is a free pid again (pid_max may be 32768), and a late
killpg could hit whatever process has been given that pid since.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path


class ManagedProcess:
    """A command started in its own session; stop() = SIGTERM, grace, then SIGKILL of its group."""

    def __init__(
        self,
        argv: Sequence[str],
        stderr: Path | None = None,
        stdout: Path | None = None,
        env: Callable[[], Mapping[str, str]] | None = None,
    ) -> None:
        self.argv = list(argv)
        # The child's environment, made at each start (a fake clock's true start time);
        # None: the runner's own.
        self.env = env
        self.stderr = stderr  # appended to; None discards it
        self.stdout = stdout  # appended to (a Java client's events); None discards it
        self._proc: subprocess.Popen[bytes] | None = None
        self._swept = False  # the group of the current child has been SIGKILLed after its end

    def start(self) -> ManagedProcess:
        """Start (again, once an earlier run has ended)."""
        if self.running:
            raise RuntimeError(f"pid {self.pid} is still running: {self.argv[:3]}")
        with contextlib.ExitStack() as stack:
            err = stack.enter_context(self.stderr.open("ab")) if self.stderr else None
            out = stack.enter_context(self.stdout.open("ab")) if self.stdout else None
            self._proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=out if out is not None else subprocess.DEVNULL,
                stderr=err if err is not None else subprocess.DEVNULL,
                start_new_session=True,
                env=None if self.env is None else dict(self.env()),
            )
        self._swept = False
        return self

    @property
    def started(self) -> bool:
        return self._proc is not None

    @property
    def pid(self) -> int:
        """The child's pid, which is also its process group's id."""
        if self._proc is None:
            raise RuntimeError(f"not started: {self.argv[:3]}")
        return self._proc.pid

    def poll(self) -> int | None:
        """The exit code once it has ended (reaping it), else None; None if never started."""
        if self._proc is None:
            return None
        code = self._proc.poll()
        if code is not None:
            self._sweep()
        return code

    @property
    def returncode(self) -> int | None:
        return self.poll()

    @property
    def running(self) -> bool:
        return self._proc is not None and self.poll() is None

    def wait(self, timeout_s: float | None = None) -> bool:
        """True once it has ended, False if it is still running after `timeout_s`."""
        if self._proc is None:
            return True
        try:
            self._proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return False
        self._sweep()
        return True

    def terminate(self) -> None:
        """SIGTERM to the child itself (it closes cleanly and ends what it started)."""
        if self.running:
            assert self._proc is not None
            self._proc.send_signal(signal.SIGTERM)
            self.resume()  # a paused child handles SIGTERM only once it runs again

    def pause(self) -> None:
        """SIGSTOP to the whole process group: frozen mid-call, sockets open (a GC pause, a
        stalled VM)."""
        if self.running:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT to the group (harmless when it was not stopped)."""
        if self.running:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL to the whole process group, then reap the child: nothing gets to clean up."""
        if self._proc is None or self._swept:
            return
        self._sweep()
        self._proc.wait()

    def _sweep(self) -> None:
        """SIGKILL the group once: the child, or what it left behind (Spark's JVM)."""
        if self._proc is None or self._swept:
            return
        self._swept = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, signal.SIGKILL)

    def stop(self, grace_s: float) -> bool:
        """SIGTERM, wait up to `grace_s`, then SIGKILL the group. False if it had to be killed."""
        return not stop_all([self], grace_s)


def stop_all(processes: Iterable[ManagedProcess], grace_s: float) -> list[ManagedProcess]:
    """Stop several at once (one grace period for all); return the ones that were SIGKILLed.

    Whatever is left in a stopped child's process group afterwards is SIGKILLed too.
    """
    procs = [p for p in processes if p.started]
    for p in procs:
        p.terminate()
    deadline = time.monotonic() + grace_s
    killed = []
    for p in procs:
        if not p.wait(max(0.0, deadline - time.monotonic())):
            killed.append(p)
            p.kill()
    return killed
