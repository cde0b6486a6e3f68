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


def test_ctrl_c_mid_workload_leaves_nothing_running(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        harness_command("run", HERE / "small-kill.yaml", "--out", tmp_path),
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

    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=240) == 130, "".join(seen[-40:])
    assert _owned_by(proc.pid) == []
    wait_until(lambda: _processes_mentioning(str(tmp_path)) == [], 30, "members to exit")
    history = next(tmp_path.glob("*/cells/*/history.jsonl")).read_text()
    assert "interrupted (Ctrl-C)" in history
