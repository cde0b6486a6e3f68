"""One member of a command pipeline: a small launcher that runs the user's program and bounds it.

`python -m harness.workload.command.member --spec COMMAND_PIPELINE_SPEC_JSON --runtime
RUNTIME_JSON --consumer pipeline/m0` (harness.workload.member_process)

The user's program will not watch the runner, so this process does it for them: it starts
`command` (no shell) in its own process group (the launcher's: the supervisor started it as a
session leader), then watches. The group is SIGKILLed, the program and whatever it started
(Spark's JVM) with it, when the runner that started the launcher is gone (`os.getppid()`
changes), when the cell's lifetime bound `max_s` has passed, or when the program outlives
the grace period after a SIGTERM. A `pipeline-crash` SIGKILLs the group from outside.

The program gets the harness's environment, the spec's `env`, then COMMAND_ENV (where to read
and write, its group, its transactional id, its index, a state folder of its own that
outlives its restarts); PATH starts with this Python's
folder, so `python` is the interpreter the harness runs in. Its stdout goes to
`<member>.stdout.log`, its stderr to `<member>.stderr.log` (beside this launcher's own lines)
in the cell's consumers/ folder.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from harness.results import events as ev
from harness.results.member_files import EventLog, MemberPaths
from harness.spec.consumers import CommandPipelineSpec
from harness.workload.member_process import member_index, parse_member_args, run_until_signalled
from harness.workload.runtime import Runtime

STOP_GRACE_S = 10.0  # SIGTERM, then the group's SIGKILL (the supervisor waits longer)
WATCH_S = 0.2
EXIT_NOT_STARTED = 127


def stdout_path(paths: MemberPaths) -> Path:
    return paths.directory / f"{paths.stem}.stdout.log"


def state_dir(paths: MemberPaths) -> Path:
    """The member's own folder in the cell, kept across its restarts (a Spark checkpoint)."""
    return paths.directory / f"{paths.stem}.state"


def member_env(
    spec: CommandPipelineSpec, runtime: Runtime, name: str, base: dict[str, str]
) -> dict[str, str]:
    """`base` (the harness's own environment), the spec's `env`, then what the harness sets."""
    index = member_index(name)
    return {
        **base,
        **spec.env,
        "PATH": spec.member_path(base.get("PATH", ""), str(Path(sys.executable).parent)),
        "KAFKA_BOOTSTRAP_SERVERS": runtime.bootstrap,
        "INPUT_TOPIC": runtime.topic,
        "OUTPUT_TOPIC": spec.output,
        "GROUP_ID": spec.group,
        "TRANSACTIONAL_ID": spec.member_transactional_id(index),
        "MEMBER_INDEX": str(index),
        "STATE_DIR": str(state_dir(MemberPaths(runtime.directory, name))),
    }


class Launcher:
    def __init__(self, spec: CommandPipelineSpec, runtime: Runtime, name: str) -> None:
        self.spec = spec
        self.runtime = runtime
        self.name = name
        self.paths = MemberPaths(runtime.directory, name)
        self.event = EventLog(self.paths)
        self.stopping = False

    def run(self) -> int:
        parent = os.getppid()
        deadline = time.monotonic() + self.runtime.max_s
        state_dir(self.paths).mkdir(parents=True, exist_ok=True)
        try:
            with stdout_path(self.paths).open("ab") as out:
                program = subprocess.Popen(
                    self.spec.command,
                    cwd=self.spec.cwd,
                    env=member_env(self.spec, self.runtime, self.name, dict(os.environ)),
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=None,  # inherited: the launcher's stderr file
                )
        except OSError as exc:
            # The supervisor sees it (not_started): the drain stops waiting, the cell is unknown.
            error = f"cannot start {self.spec.command[0]!r}: {exc}"
            self.event(ev.CONSUMER_NOT_STARTED, error=error)
            print(f"{self.name}: cannot start {self.spec.command}: {exc}", file=sys.stderr)
            return EXIT_NOT_STARTED
        self.event(
            ev.CONSUMER_START, pid=program.pid, launcher=os.getpid(), command=self.spec.command
        )
        while program.poll() is None:
            if os.getppid() != parent or time.monotonic() > deadline:
                _kill_group(program)  # the runner is gone, or the bound passed: nothing stays
            if self.stopping:
                return self.stop(program)
            time.sleep(WATCH_S)
        self.event(ev.CONSUMER_STOP, generation=0, code=program.returncode)
        return int(program.returncode)

    def stop(self, program: subprocess.Popen[bytes]) -> int:
        """SIGTERM the program (it may close cleanly), then the whole group if it lingers."""
        with contextlib.suppress(ProcessLookupError):
            program.send_signal(signal.SIGTERM)
        try:
            self.event(ev.CONSUMER_STOP, generation=0, code=program.wait(STOP_GRACE_S))
        except subprocess.TimeoutExpired:
            self.event(ev.CONSUMER_STOP, generation=0, code=None, note="did not stop on SIGTERM")
            _kill_group(program)
        return 0


def _kill_group(program: subprocess.Popen[bytes]) -> None:
    """SIGKILL this process group: the program, its children, and this launcher. A launcher
    that does not lead its group (started by hand) kills only the program, then exits."""
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpgrp(), signal.SIGKILL)
    program.kill()
    program.wait()
    os._exit(1)


def main(argv: list[str] | None = None) -> None:
    args = parse_member_args(CommandPipelineSpec, sys.argv[1:] if argv is None else argv, __doc__)
    launcher = Launcher(args.spec, args.runtime, args.name)
    code = run_until_signalled(launcher, launcher.run)
    raise SystemExit(code or 0)


if __name__ == "__main__":
    main()
