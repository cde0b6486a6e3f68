"""Test 6: nothing of ours is left running: after a run, after SIGTERM / Ctrl-C, and after
SIGKILL (the run's watchdog removes the cluster; if the watchdog died too, the next start
or `cleanup` removes the leftovers)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import docker
import pytest

from harness import KafkaCluster
from harness.common.waiting import wait_until
from harness.nodes.reaper import RUN_LABEL
from tests.integration.conftest import ClusterFactory

pytestmark = pytest.mark.docker

HOLDER = Path(__file__).with_name("hold_cluster.py")
REPO = Path(__file__).resolve().parents[2]


def _resources(run_id: str) -> tuple[list[str], list[str]]:
    client = docker.from_env()
    selector = {"label": f"{RUN_LABEL}={run_id}"}
    containers = [c.name for c in client.containers.list(all=True, filters=selector)]
    networks = [n.name for n in client.networks.list(filters=selector)]
    return containers, networks


def _watchdogs(run_id: str) -> list[int]:
    """Pids of the run's watchdog processes."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"harness.nodes.watchdog" in argv and run_id.encode() in argv:
                found.append(int(entry.name))
    return found


def _start_holder(run_id: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, str(HOLDER), "kraft", run_id],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
        # A background job of a non-interactive shell (CI) inherits SIGINT ignored;
        # a program in a terminal gets the default, which Ctrl-C relies on.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("READY"), f"holder did not start a cluster: {line!r}"
    return proc


def _sigkill_with_watchdog(proc: subprocess.Popen[str], run_id: str) -> None:
    """SIGKILL the run's watchdog, then its runner: nothing of the run can clean up."""
    watchdogs = _watchdogs(run_id)
    assert len(watchdogs) == 1, f"one watchdog per run, found {watchdogs}"
    os.kill(watchdogs[0], signal.SIGKILL)
    wait_until(lambda: not _watchdogs(run_id), 30, "the watchdog gone", interval_s=0.1)
    proc.kill()
    proc.wait(timeout=30)


def _sigkilled_holder(prefix: str) -> str:
    """A run whose process and watchdog died by SIGKILL (nothing cleaned up); its run id."""
    run_id = f"{prefix}{uuid.uuid4().hex[:6]}"
    proc = _start_holder(run_id)
    _sigkill_with_watchdog(proc, run_id)
    containers, networks = _resources(run_id)
    assert containers and networks, "SIGKILL cannot be caught: its resources should still exist"
    return run_id


def test_run_leaves_nothing(start_cluster: ClusterFactory) -> None:
    cluster = start_cluster(mode="kraft", brokers=1)
    run_id = cluster.run_id
    containers, networks = _resources(run_id)
    assert len(containers) == 1 and networks == [f"kc-{run_id}"]
    assert len(_watchdogs(run_id)) == 1
    cluster.close()
    assert _resources(run_id) == ([], [])
    assert _watchdogs(run_id) == [], "close() stops the watchdog"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_cleans_up(sig: signal.Signals) -> None:
    run_id = f"sig{uuid.uuid4().hex[:6]}"
    proc = _start_holder(run_id)
    assert _resources(run_id)[0] != []
    proc.send_signal(sig)
    proc.wait(timeout=60)
    assert _resources(run_id) == ([], [])
    assert _watchdogs(run_id) == []


def test_sigkilled_runner_cleaned_up_by_its_watchdog() -> None:
    """Defect 6: a `kill -9` of the runner mid-cell used to leave its containers and network."""
    run_id = f"wd{uuid.uuid4().hex[:6]}"
    proc = _start_holder(run_id)
    containers, networks = _resources(run_id)
    assert containers and networks and len(_watchdogs(run_id)) == 1
    proc.kill()
    proc.wait(timeout=30)
    wait_until(
        lambda: _resources(run_id),
        60,
        "the watchdog to remove the run",
        done=lambda r: r == ([], []),
    )
    wait_until(lambda: not _watchdogs(run_id), 30, "the watchdog to exit")


def test_sigkill_leftovers_removed_at_next_start() -> None:
    run_id = f"kill{uuid.uuid4().hex[:6]}"
    proc = _start_holder(run_id)
    _sigkill_with_watchdog(proc, run_id)
    containers, networks = _resources(run_id)
    assert containers and networks, (
        "SIGKILL cannot be caught: its containers should still exist here"
    )

    with KafkaCluster(mode="kraft", brokers=1) as other:
        assert other.brokers == [1]
        assert _resources(run_id) == ([], [])


def test_cleanup_command_removes_dead_runs() -> None:
    run_id = _sigkilled_holder("cli")
    out = subprocess.run(
        [sys.executable, "-m", "harness", "cleanup"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    )
    assert f"kc-{run_id}-broker-1" in out.stderr
    wait_until(
        lambda: _resources(run_id),
        30,
        "cleanup to remove the dead run",
        done=lambda r: r == ([], []),
    )
