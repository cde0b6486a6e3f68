"""ManagedProcess with real tiny children (python -c): stop, kill, the process group, stderr."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.common.processes import ManagedProcess, stop_all
from harness.common.waiting import wait_until

# A child that writes "ready" to stderr once it is in place (handlers set, grandchild started).
CLEAN = "import signal, sys, time; sys.stderr.write('ready\\n'); sys.stderr.flush(); time.sleep(60)"
STUBBORN = (
    "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "sys.stderr.write('ready\\n'); sys.stderr.flush(); time.sleep(60)"
)
# Starts a grandchild (in the same process group), prints its pid, then ignores SIGTERM or not.
PARENT_OF = (
    "import signal, subprocess, sys, time; {ignore}"
    "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
    "sys.stderr.write(f'ready {{g.pid}}\\n'); sys.stderr.flush(); time.sleep(60)"
)


def started(argv_code: str, stderr: Path) -> ManagedProcess:
    proc = ManagedProcess([sys.executable, "-c", argv_code], stderr).start()
    wait_until(lambda: "ready" in stderr.read_text(), 30, "the child in place", interval_s=0.05)
    return proc


def alive(pid: int) -> bool:
    """Running, not a zombie (a zombie's signals are no longer delivered)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def grandchild(stderr: Path) -> int:
    return int(stderr.read_text().split()[-1])


def test_own_session_and_process_group(tmp_path: Path) -> None:
    proc = started(CLEAN, tmp_path / "err")
    try:
        assert os.getsid(proc.pid) == proc.pid and os.getpgid(proc.pid) == proc.pid
        assert proc.running and proc.poll() is None and proc.returncode is None
    finally:
        proc.kill()


def test_stop_on_sigterm_is_clean(tmp_path: Path) -> None:
    proc = started(CLEAN, tmp_path / "err")
    assert proc.stop(grace_s=30) is True
    assert not proc.running and proc.returncode == -15


def test_stop_kills_a_child_that_ignores_sigterm(tmp_path: Path) -> None:
    proc = started(STUBBORN, tmp_path / "err")
    assert proc.stop(grace_s=0.2) is False
    assert proc.returncode == -9


def test_stop_takes_the_whole_group(tmp_path: Path) -> None:
    err = tmp_path / "err"
    proc = started(PARENT_OF.format(ignore=""), err)
    g = grandchild(err)
    assert alive(g)
    assert proc.stop(grace_s=30) is True  # the child ended on SIGTERM; its grandchild did not
    wait_until(lambda: not alive(g), 30, "the grandchild gone", interval_s=0.05)


def test_kill_takes_the_whole_group(tmp_path: Path) -> None:
    err = tmp_path / "err"
    proc = started(PARENT_OF.format(ignore="signal.signal(signal.SIGTERM, signal.SIG_IGN); "), err)
    g = grandchild(err)
    proc.kill()
    assert proc.returncode == -9
    wait_until(lambda: not alive(g), 30, "the grandchild gone", interval_s=0.05)


def test_leftovers_of_a_child_that_ended_by_itself_go_when_it_is_reaped(tmp_path: Path) -> None:
    err = tmp_path / "err"
    code = (
        "import subprocess, sys; "
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        "sys.stderr.write(f'ready {g.pid}\\n')"
    )
    proc = ManagedProcess([sys.executable, "-c", code], err).start()
    wait_until(proc.poll, 30, "the child ended", done=lambda c: c is not None, interval_s=0.05)
    assert proc.returncode == 0
    wait_until(lambda: not alive(grandchild(err)), 30, "its grandchild gone", interval_s=0.05)
    proc.kill()  # ended and swept: nothing more is signalled
    assert proc.returncode == 0


def test_stop_all_shares_one_grace_and_names_the_killed(tmp_path: Path) -> None:
    clean = started(CLEAN, tmp_path / "a")
    stubborn = started(STUBBORN, tmp_path / "b")
    never = ManagedProcess([sys.executable, "-c", "pass"])
    assert stop_all([clean, stubborn, never], grace_s=0.5) == [stubborn]
    assert (clean.returncode, stubborn.returncode, never.returncode) == (-15, -9, None)


def test_stderr_is_appended_and_restart_allowed(tmp_path: Path) -> None:
    err = tmp_path / "err"
    err.write_text("earlier\n")
    proc = ManagedProcess([sys.executable, "-c", "import sys; sys.stderr.write('one\\n')"], err)
    proc.start().wait(30)
    proc.start().wait(30)
    assert err.read_text() == "earlier\none\none\n"
    assert proc.returncode == 0


def test_start_while_running_is_refused(tmp_path: Path) -> None:
    proc = started(CLEAN, tmp_path / "err")
    try:
        with pytest.raises(RuntimeError, match="still running"):
            proc.start()
    finally:
        proc.kill()


def test_not_started() -> None:
    proc = ManagedProcess([sys.executable, "-c", "pass"])
    assert not proc.running and proc.poll() is None and proc.wait(0)
    proc.kill()  # nothing to do
    with pytest.raises(RuntimeError, match="not started"):
        _ = proc.pid


# A runner that starts a member in its own session and dies once the member watches it: the member, stuck as in a
# librdkafka close() (SIGTERM ignored, the main thread asleep), with a grandchild in its group.
ORPHANED = """
import subprocess, sys
member = '''
import os, signal, subprocess, sys, time
from harness.workload.member_process import exit_with_parent
signal.signal(signal.SIGTERM, signal.SIG_IGN)
g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])
exit_with_parent(os.getppid(), grace_s=0.2)
print(os.getpid(), g.pid, flush=True)
time.sleep(60)
'''
p = subprocess.Popen([sys.executable, '-c', member], start_new_session=True, stdout=subprocess.PIPE)
sys.stdout.write(p.stdout.readline().decode())  # the member watches this runner: now it dies
"""


def test_a_member_whose_runner_is_gone_ends_with_its_group(tmp_path: Path) -> None:
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": root}
    out = tmp_path / "pids"
    with out.open("w") as sink:  # the runner exits; its member lives on, orphaned
        subprocess.run([sys.executable, "-c", ORPHANED], stdout=sink, env=env, check=True)
    wait_until(lambda: len(out.read_text().split()) == 2, 30, "the member's pids", interval_s=0.05)
    member, grandchild = (int(p) for p in out.read_text().split())
    wait_until(
        lambda: not alive(member) and not alive(grandchild), 30, "the orphan gone", interval_s=0.1
    )
