"""The checks on a real Spark cluster, as a user with one runs them: a standalone master and
worker from the installed pyspark on 127.0.0.1, `harness verify --spark-master` of a result
folder, the same figures as local[2] and as the folder's known ones. (No Docker; slow, so
with the experiment tests.)"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest

from benchmarks.synthetic_cell import figures, write_cell
from harness.common.waiting import wait_until
from harness.nodes.ports import free_ports
from harness.spec import expand_cells, load_spec
from tests.experiments.cli import HERE, harness

pytestmark = [pytest.mark.slow, pytest.mark.spark]

SPARK_HOME = Path(pyspark.__file__).parent
ROWS = 20_000


def _start(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:  # its own process group: the JVM and its children go together
        return subprocess.Popen(
            [str(SPARK_HOME / "bin" / "spark-class"), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )


@pytest.fixture
def standalone(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """spark://127.0.0.1:<port> with one 2-core worker; both stopped afterwards."""
    port, master_ui, worker_ui = free_ports(3)
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1"}
    url = f"spark://127.0.0.1:{port}"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs.append(
            _start(
                [
                    "org.apache.spark.deploy.master.Master",
                    *("--host", "127.0.0.1", "--port", str(port)),
                    *("--webui-port", str(master_ui)),
                ],
                tmp_path / "master.log",
                env,
            )
        )
        worker_log = tmp_path / "worker.log"
        procs.append(
            _start(
                [
                    "org.apache.spark.deploy.worker.Worker",
                    url,
                    *("--host", "127.0.0.1", "--cores", "2", "--memory", "2g"),
                    *("--webui-port", str(worker_ui), "--work-dir", str(tmp_path / "work")),
                ],
                worker_log,
                env,
            )
        )
        wait_until(
            lambda: "Successfully registered with master" in worker_log.read_text(errors="replace"),
            90,
            f"a Spark worker registered with {url} (see {worker_log})",
        )
        yield url, env
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _result_folder(root: Path) -> tuple[Path, str, dict[str, object]]:
    """A run folder of small-kill.yaml whose one cell holds a synthetic cell's files."""
    spec_path = HERE / "small-kill.yaml"
    (cell,) = expand_cells(load_spec(spec_path), str(spec_path))
    run = root / "run"
    (run / "cells").mkdir(parents=True)
    shutil.copy(spec_path, run / "spec.yaml")
    known = write_cell(run / "cells" / cell.id, ROWS)
    return run, cell.id, known


def _figures(run: Path, cell_id: str) -> dict[str, object]:
    return figures(json.loads((run / "cells" / cell_id / "summary.json").read_text()))


# make test-slow (nightly): `verify` of a result folder is test_end_to_end's path (local Spark);
# --spark-master reaching the command, test_a_bad_master_url_is_a_usage_error's (make test).
@pytest.mark.slow_lane
def test_verify_on_a_standalone_cluster_equals_local(
    tmp_path: Path, standalone: tuple[str, dict[str, str]]
) -> None:
    url, env = standalone
    run, cell_id, known = _result_folder(tmp_path)

    local = harness("verify", run, "--spark-master", "local[2]")  # not the tests' Connect server
    assert local.returncode in (0, 1), local.stderr[-3000:]
    on_local = _figures(run, cell_id)

    os.environ.update(SPARK_LOCAL_IP=env["SPARK_LOCAL_IP"])  # the driver binds 127.0.0.1 too
    try:
        remote = harness("verify", run, "--spark-master", url)
    finally:
        os.environ.pop("SPARK_LOCAL_IP", None)
    assert remote.returncode == local.returncode, remote.stderr[-3000:]
    on_cluster = _figures(run, cell_id)

    assert on_cluster == on_local == known
    # It really ran there: the master knows the application.
    assert (tmp_path / "work").is_dir() and any((tmp_path / "work").iterdir())


def test_verify_over_spark_connect_gives_the_known_figures(
    tmp_path: Path, spark_connect_master: str | None
) -> None:
    """The tests' Spark Connect server (tests/spark_connect.py), named as a user names one:
    every figure of the synthetic cell as known."""
    assert spark_connect_master is not None and spark_connect_master.startswith("sc://")
    run, cell_id, known = _result_folder(tmp_path)
    done = harness("verify", run, "--spark-master", spark_connect_master)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    assert _figures(run, cell_id) == known


def test_a_lane_on_spark_connect_is_cancelled(spark_connect_master: str | None) -> None:
    """A check lane's operations are tagged, not grouped, through Spark Connect (no
    SparkContext): stopping the lane interrupts them (the classic session's job groups:
    tests/unit/test_verify.py)."""
    from spark_jobs.session import CONNECT_MODE_ENV, spark_session
    from tests.spark_lanes import JOBS, stop_a_busy_lane

    assert spark_connect_master is not None
    mode_before = os.environ.get(CONNECT_MODE_ENV)
    spark = spark_session(master=spark_connect_master)
    done, errors = stop_a_busy_lane(spark)
    try:
        assert errors and "operation_canceled" in errors[0].lower(), errors
        assert len(done) < JOBS
        assert spark.range(5).count() == 5  # the session goes on
    finally:
        spark.stop()
        # This process's later classic sessions (and its children's) as before the test.
        if mode_before is None:
            os.environ.pop(CONNECT_MODE_ENV, None)


def test_a_bad_master_url_is_a_usage_error(tmp_path: Path) -> None:
    run, _, _ = _result_folder(tmp_path)
    done = harness("verify", run, "--spark-master", "not-a-url")
    assert done.returncode == 2
    assert "--spark-master 'not-a-url'" in done.stdout + done.stderr
