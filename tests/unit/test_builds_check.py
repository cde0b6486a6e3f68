"""What a run needs built, without Docker: a single experiment (or a matrix) refuses to start
when an image, jar or binary its cells need is missing, as a suite does (exit 3, naming the
make command); `validate` lists what the cells need and what is missing (exit 0)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import harness.experiment
import harness.suite.builds as builds
from harness.cli import app
from harness.cli.terminal import EXIT_INFRA, EXIT_PASS
from harness.spec import expand_cells, load_spec
from harness.suite.builds import Needs, Probes, cells_need, missing_builds
from tests.unit.test_suite_plan import make_tree

runner = CliRunner()

UPGRADE = """
name: up
cluster: {version: 3.9.2}
producer: {records: 10}
faults: [{at_s: 1, kind: upgrade, to_version: 4.1.2}]
"""
MATRIX = """
name: versions
producer: {records: 10}
matrix: {cluster.version: [3.9.2, 4.2.2]}
"""
EVERYTHING = """
name: every
cluster: {version: 3.9.2}
producer: {records: 10, client: java}
consumers: [{kind: group}, {kind: spark}]
faults: [{at_s: 1, kind: latency, target: "broker:1", duration_s: 1, delay_ms: 10}]
"""


def probes(
    images: set[str] | None = None,
    jars: set[str] | None = None,
    spark: bool = True,
    toxiproxy: bool = True,
) -> Probes:
    """Probes of a machine that has everything but what is named (images/jars: built ones)."""
    return Probes(
        lambda v: images is None or v in images,
        lambda v: jars is None or v in jars,
        lambda: spark,
        lambda: toxiproxy,
    )


def use(monkeypatch: pytest.MonkeyPatch, machine: Probes) -> None:
    monkeypatch.setattr(builds, "local_probes", lambda: machine)


def nothing_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    def run_plan(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("run_plan was called: the check let a run start")

    monkeypatch.setattr(harness.experiment, "run_plan", run_plan)


def spec_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path


def test_cells_need_every_version_jar_and_binary(tmp_path: Path) -> None:
    cells = expand_cells(load_spec(spec_file(tmp_path, EVERYTHING)))
    assert cells_need(cells) == Needs(("3.9.2",), ("3.9.2",), spark=True, toxiproxy=True)
    up = expand_cells(load_spec(spec_file(tmp_path, UPGRADE)))
    assert cells_need(up) == Needs(("3.9.2", "4.1.2"), ())


def test_a_java_share_member_needs_its_versions_jars(tmp_path: Path) -> None:
    """A share set with `client: java` runs Kafka's jars of the cell's version (once missed:
    a cell on 4.2.2 started and ended `unknown` on the missing jars)."""
    text = "name: s\ncluster: {version: 4.2.2}\nproducer: {records: 10}\n"
    java = expand_cells(
        load_spec(spec_file(tmp_path, text + "consumers: [{kind: share, client: java}]\n"))
    )
    assert cells_need(java) == Needs(("4.2.2",), ("4.2.2",))
    native = expand_cells(load_spec(spec_file(tmp_path, text + "consumers: [{kind: share}]\n")))
    assert cells_need(native) == Needs(("4.2.2",), ())


def test_a_spec_names_every_client_its_cell_runs(tmp_path: Path) -> None:
    """Every consumer set with a `client` counts (Spark has none), so a new kind needs no list."""
    text = (
        "name: s\ncluster: {version: 4.2.2}\nproducer: {records: 10, client: java}\n"
        "consumers: [{kind: group}, {kind: share, client: java}, {kind: spark}]\n"
    )
    assert load_spec(spec_file(tmp_path, text)).clients() == {"java", "librdkafka"}
    plain = load_spec(spec_file(tmp_path, "name: s\nproducer: {records: 10}\n"))
    assert plain.clients() == {"librdkafka"}


def test_missing_spark_jars_and_toxiproxy_name_their_make_targets() -> None:
    needs = Needs(("3.9.2",), (), spark=True, toxiproxy=True)
    lines = missing_builds(needs, probes(spark=False, toxiproxy=False))
    text = "\n".join(lines)
    assert "no Spark Kafka connector (spark_jobs/jars)" in text
    assert "no Toxiproxy server (toxiproxy-server)" in text
    assert "  make spark-jars" in lines and "  make toxiproxy" in lines
    assert "make images" not in text and "extra-versions" not in text  # no version missing
    assert missing_builds(needs, probes()) == []


@pytest.mark.parametrize(
    ("text", "missing"),
    [(UPGRADE, "4.1.2"), (MATRIX, "4.2.2")],  # an upgrade's to_version; a matrix's cell
)
def test_a_single_run_refuses_before_anything_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, missing: str
) -> None:
    use(monkeypatch, probes(images={"3.9.2"}))
    nothing_runs(monkeypatch)
    out = tmp_path / "results"
    result = runner.invoke(app, ["run", "--out", str(out), str(spec_file(tmp_path, text))])
    assert result.exit_code == EXIT_INFRA, result.output
    assert f"no broker image for 1 version(s) the cells run on: kafka-chaos/kafka:{missing}" in (
        result.output
    )
    assert "nothing was run; build them first:" in result.output
    assert f'make images VERSIONS="{missing}"' in result.output
    assert not out.exists()  # no run folder


def test_a_single_run_refuses_missing_jars_and_binaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use(monkeypatch, probes(jars=set(), spark=False, toxiproxy=False))
    nothing_runs(monkeypatch)
    result = runner.invoke(
        app, ["run", "--out", str(tmp_path / "r"), str(spec_file(tmp_path, EVERYTHING))]
    )
    assert result.exit_code == EXIT_INFRA, result.output
    for command in ('make java-clients VERSIONS="3.9.2"', "make spark-jars", "make toxiproxy"):
        assert command in result.output


def test_dry_run_asks_nothing_about_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_probes() -> Probes:
        raise AssertionError("--dry-run probed the machine")

    monkeypatch.setattr(builds, "local_probes", no_probes)
    result = runner.invoke(app, ["run", "--dry-run", str(spec_file(tmp_path, UPGRADE))])
    assert result.exit_code == EXIT_PASS, result.output


def test_validate_lists_what_the_cells_need_and_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use(monkeypatch, probes(images={"3.9.2"}, spark=False))
    result = runner.invoke(app, ["validate", str(spec_file(tmp_path, EVERYTHING + "\n"))])
    assert result.exit_code == EXIT_PASS, result.output  # the spec is valid all the same
    lines = [line.rstrip() for line in result.output.splitlines()]
    assert "needs built (on this machine):" in lines
    assert any(
        line.split() == ["broker", "image", "kafka-chaos/kafka:3.9.2", "built"] for line in lines
    )
    assert any("java_clients/lib/3.9.2" in line and line.endswith("built") for line in lines)
    assert any("spark_jobs/jars" in line and line.endswith("MISSING") for line in lines)
    assert any("toxiproxy-server" in line and line.endswith("built") for line in lines)
    assert "1 missing; build them before `run`:" in lines
    assert "  make spark-jars" in lines
    assert lines[-1] == "spec is valid"


def test_validate_says_when_docker_cannot_tell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use(monkeypatch, Probes(lambda _v: None, lambda _v: True, lambda: True, lambda: True))
    result = runner.invoke(app, ["validate", str(spec_file(tmp_path, UPGRADE))])
    assert result.exit_code == EXIT_PASS, result.output
    assert "kafka-chaos/kafka:4.1.2  cannot tell (Docker does not answer)" in result.output
    assert "missing" not in result.output


def test_validate_a_suite_lists_its_cells_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use(monkeypatch, probes(images={"3.9.2"}))
    suite = make_tree(
        tmp_path, "experiments: ['exp/*.yaml']\n", {"up.yaml": UPGRADE, "m.yaml": MATRIX}
    )
    result = runner.invoke(app, ["validate", str(suite)])
    assert result.exit_code == EXIT_PASS, result.output
    assert "kafka-chaos/kafka:4.1.2  MISSING" in result.output
    assert 'make images VERSIONS="4.1.2 4.2.2"' in result.output
    assert "suite is valid" in result.output
