"""CPU burners are real processes (no Docker): started, running, stopped and gone; ending by
themselves after their cap, and when their parent is gone."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.common.burners import burner_command, cpu_burners, start_burners, stop_burners


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a parent that does not reap it counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def gone_within(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return not alive(pid)


def test_a_burner_runs_until_stopped_then_is_gone() -> None:
    (burner,) = start_burners(1, max_s=30)
    try:
        time.sleep(0.3)
        assert burner.running and alive(burner.pid)
    finally:
        stop_burners([burner])
    assert not burner.running and not alive(burner.pid)


def test_a_burner_ends_by_itself_after_its_cap() -> None:
    (burner,) = start_burners(1, max_s=0.5)
    try:
        assert burner.wait(timeout_s=15), "the burner outlived its cap"
        assert burner.returncode == 0
    finally:
        stop_burners([burner])


def test_a_burner_ends_when_its_parent_is_gone() -> None:
    # A parent that starts a burner and exits without stopping it (as if SIGKILLed).
    code = (
        "import subprocess;"
        "from harness.common.burners import burner_command;"
        "p = subprocess.Popen(burner_command(60), start_new_session=True);"
        "print(p.pid, flush=True)"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, env=env
    )
    pid = int(done.stdout.split()[0])
    assert gone_within(pid, 15), "the burner outlived its parent"


def test_a_burner_owned_by_another_pid_does_not_start_burning() -> None:
    done = subprocess.run(burner_command(60, parent=1), timeout=30)
    assert done.returncode == 0


def test_cpu_burners_are_stopped_when_the_block_raises() -> None:
    with pytest.raises(KeyboardInterrupt), cpu_burners(2, max_s=30) as burners:
        assert [b.running for b in burners] == [True, True]
        pids = [b.pid for b in burners]
        raise KeyboardInterrupt
    assert not any(alive(pid) for pid in pids)


def test_no_burner_for_a_load_of_0() -> None:
    with cpu_burners(0, max_s=30) as burners:
        assert burners == []
