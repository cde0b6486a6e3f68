"""Ctrl-C in the middle of a run: exit 130, no container, network or consumer process left."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from pathlib import Path

import docker
import pytest

from harness.nodes.reaper import OWNER_LABEL
from tests.experiments.cli import HERE, ROOT, harness_command
from tests.integration.kafka_io import wait_until

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _owned_by(pid: int) -> list[str]:
    client = docker.from_env()
    names = [
        str(c.name)
        for c in client.containers.list(all=True, filters={"label": OWNER_LABEL})
        if c.labels.get(OWNER_LABEL, "").split(":")[1:2] == [str(pid)]
    ]
    names += [
        str(n.name)
        for n in client.networks.list(filters={"label": OWNER_LABEL})
        if (n.attrs.get("Labels") or {}).get(OWNER_LABEL, "").split(":")[1:2] == [str(pid)]
    ]
    return names


def _processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if text in cmdline and int(entry.name) != os.getpid():
                found.append(int(entry.name))
    return found


def _start(spec: str, tmp_path: Path) -> tuple[subprocess.Popen[str], list[str]]:
    """The run, followed until its first fault is in (mid-workload, a broker down)."""
    proc = subprocess.Popen(
        harness_command("run", HERE / spec, "--out", tmp_path),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        # A background job of a non-interactive shell (CI) inherits SIGINT ignored;
        # a program in a terminal gets the default, which Ctrl-C relies on.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stderr is not None
    seen: list[str] = []
    workload = threading.Event()

    def follow() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            seen.append(line)
            if "fault.inject" in line:  # mid-workload, a broker down
                workload.set()

    threading.Thread(target=follow, daemon=True).start()
    assert workload.wait(300), "".join(seen[-40:])
    assert _owned_by(proc.pid), "the run should own a cluster now"
    assert _processes_mentioning(str(tmp_path)), "consumer members should be running"
    return proc, seen


# java-kill: the members and the producer are JVMs (Kafka's VerifiableConsumer among them). Both
# java-kill tests are in make test-slow (nightly): Ctrl-C mid-workload is small-kill's path here,
# a SIGKILLed runner's cluster removed by its watchdog test_cleanup's, and the Java clients
# test_java_clients'.
@pytest.mark.parametrize(
    "spec", ["small-kill.yaml", pytest.param("java-kill.yaml", marks=pytest.mark.slow_lane)]
)
def test_ctrl_c_mid_workload_leaves_nothing_running(tmp_path: Path, spec: str) -> None:
    proc, seen = _start(spec, tmp_path)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=240) == 130, "".join(seen[-40:])
    assert _owned_by(proc.pid) == []
    wait_until(lambda: _processes_mentioning(str(tmp_path)) == [], 30, "members to exit")
    history = next(tmp_path.glob("*/cells/*/history.jsonl")).read_text()
    assert "interrupted (Ctrl-C)" in history


@pytest.mark.slow_lane
def test_a_killed_runner_leaves_no_java_client_running(tmp_path: Path) -> None:
    """SIGKILL: nothing in the runner cleans up. The watchdog removes the cluster; every JVM
    sees its parent gone (io.kafkachaos.clients.Bounded) and exits, halting if its clean
    stop hangs on the vanished cluster (30 s)."""
    proc, _ = _start("java-kill.yaml", tmp_path)
    java = [p for p in _processes_mentioning(str(tmp_path)) if _is_java(p)]
    assert len(java) == 4, "a producer and three members should be JVMs"  # 2 + 1 members
    proc.kill()
    proc.wait(timeout=30)
    wait_until(lambda: _processes_mentioning(str(tmp_path)) == [], 90, "the JVMs to exit")
    wait_until(lambda: _owned_by(proc.pid) == [], 120, "the watchdog to remove the cluster")


def _is_java(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/exe").resolve().name == "java"
    except OSError:
        return False
