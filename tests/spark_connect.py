"""One Spark Connect server for a whole test run (spark_jobs.connect_server), named in
KAFKA_CHAOS_SPARK_MASTER for every test and every `python -m harness` a test starts: each
experiment test's checks then open a session on a warm JVM instead of starting a cold one
and warming it up (~20 s less per experiment test, 2026-11-28). Started only for a run that
selected an integration test; a master the caller set already is kept as it is."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.common.processes import ManagedProcess
from harness.common.waiting import wait_until
from harness.nodes.ports import free_ports
from spark_jobs.connect_server import READY
from spark_jobs.session import MASTER_ENV

START_TIMEOUT_S = 180.0


@contextmanager
def connect_server() -> Iterator[str]:
    """Start the server, wait for its ready line, yield its address; stop it at the end."""
    folder = Path(tempfile.mkdtemp(prefix="kafka-chaos-connect-"))
    out, err = folder / "stdout", folder / "stderr"
    process = ManagedProcess(
        [sys.executable, "-m", "spark_jobs.connect_server", "--port", str(free_ports(1)[0])],
        stdout=out,
        stderr=err,
    ).start()
    try:

        def ready() -> str:
            if process.poll() is not None:
                raise RuntimeError(f"the Spark Connect server ended: {err.read_text()[-3000:]}")
            for line in out.read_text().splitlines() if out.exists() else []:
                if line.startswith(f"{READY} "):
                    return line.split(" ", 1)[1]
            return ""

        yield wait_until(ready, START_TIMEOUT_S, "the tests' Spark Connect server")
    finally:
        process.stop(grace_s=10)
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def connect_master() -> Iterator[str]:
    """KAFKA_CHAOS_SPARK_MASTER set to a fresh server for the block (the caller's own, if set)."""
    given = os.environ.get(MASTER_ENV)
    if given:
        yield given
        return
    with connect_server() as url:
        os.environ[MASTER_ENV] = url
        try:
            yield url
        finally:
            os.environ.pop(MASTER_ENV, None)
