"""Which runs count as dead (their owner process is gone)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from harness.nodes.reaper import owner_is_alive, owner_label


def test_own_process_is_alive() -> None:
    assert owner_is_alive(owner_label())


def test_exited_process_is_dead() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    label = owner_label(child.pid)
    assert owner_is_alive(label)
    child.kill()
    child.wait()
    assert not owner_is_alive(label)


def test_reused_pid_is_not_the_owner() -> None:
    host, pid, started = owner_label().rsplit(":", 2)
    assert not owner_is_alive(f"{host}:{pid}:{int(started) + 1}")


def test_other_hosts_and_garbage() -> None:
    assert owner_is_alive(f"not-{socket.gethostname()}:{os.getpid()}:1")
    assert not owner_is_alive("garbage")
