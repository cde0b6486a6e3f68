"""Kafka versions beyond the defaults, without Docker: docker/'s two version files, a suite's
`cluster.version: listed` and `replace:`, the check of what is built before a suite runs, and
the weekly suite and workflow."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import harness.nodes.versions as versions
from harness.cli import app
from harness.cli.terminal import EXIT_INFRA, EXIT_PASS
from harness.nodes.versions import listed_versions, read_versions, version_key
from harness.spec import SpecError, expand_cells, parse_spec, spec_to_yaml
from harness.suite.builds import Needs, Probes, missing_builds, needed_builds
from harness.suite.model import load_suite
from harness.suite.plan import make_suite_plan
from harness.suite.shards import Shard
from tests.unit.suite_folders import FakeRunner
from tests.unit.test_suite_cli import _fake_run_plan
from tests.unit.test_suite_plan import EXPERIMENTS, by_name, make_tree

ROOT = Path(__file__).resolve().parents[2]
WEEKLY = ROOT / "experiments" / "suites" / "weekly.yaml"
LISTED = "axes: {cluster.version: listed}\n"


@pytest.fixture
def two_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """docker/versions.txt and docker/versions-extra.txt replaced by files under tmp_path."""
    defaults, extra = tmp_path / "versions.txt", tmp_path / "versions-extra.txt"
    defaults.write_text("# defaults\n3.9.2\n4.3.1\n")
    extra.write_text("# on demand\n\n4.10.0\n  3.8.1  \n# 4.4.0 not yet\n4.3.1\n")
    monkeypatch.setattr(versions, "DEFAULT_VERSIONS_FILE", defaults)
    monkeypatch.setattr(versions, "EXTRA_VERSIONS_FILE", extra)
    return defaults, extra


# --- the version files ----------------------------------------------------------------------


def test_listed_versions_are_both_files_once_each_oldest_first(
    two_files: tuple[Path, Path],
) -> None:
    defaults, extra = two_files
    assert read_versions(defaults) == ["3.9.2", "4.3.1"]
    assert read_versions(extra) == ["4.10.0", "3.8.1", "4.3.1"]
    assert listed_versions() == ["3.8.1", "3.9.2", "4.3.1", "4.10.0"]  # 4.10 after 4.3
    extra.unlink()
    assert listed_versions() == ["3.9.2", "4.3.1"]
    assert version_key("x.y") == ()


def test_make_setup_still_builds_the_two_defaults_and_the_extras_are_others() -> None:
    """build-images.sh, build-java-clients.sh and built_versions() read docker/versions.txt:
    it keeps the two defaults alone; the on-demand versions are in versions-extra.txt."""
    from harness.nodes.images import built_versions

    assert built_versions() == ["3.9.2", "4.3.1"]
    extra = read_versions(ROOT / "docker" / "versions-extra.txt")
    assert extra and not set(extra) & set(built_versions())
    assert all(len(version_key(v)) == 3 for v in extra), extra
    assert len({v.rsplit(".", 1)[0] for v in extra}) == len(extra)  # one patch per line
    assert "versions-extra.txt" in (ROOT / "docker" / "versions.txt").read_text()


# --- cluster.version: listed ------------------------------------------------------------------


def test_listed_expands_to_every_listed_version(
    tmp_path: Path, two_files: tuple[Path, Path]
) -> None:
    suite = make_tree(tmp_path / "t", f"experiments: [exp/plain.yaml]\n{LISTED}")
    (axis,) = load_suite(suite).axes
    assert axis.values == ("3.8.1", "3.9.2", "4.3.1", "4.10.0") and axis.listed
    (e,) = make_suite_plan(suite).experiments
    assert [c.spec.cluster.version for c in e.cells] == ["3.8.1", "3.9.2", "4.3.1", "4.10.0"]
    assert e.added == {"cluster.version": ["3.8.1", "3.9.2", "4.3.1", "4.10.0"]}


def test_listed_is_for_the_version_only_and_must_find_versions(
    tmp_path: Path, two_files: tuple[Path, Path]
) -> None:
    suite = make_tree(
        tmp_path / "t",
        "experiments: [exp/plain.yaml]\naxes: {cluster.mode: listed, producer.acks: built}\n",
    )
    with pytest.raises(SpecError) as err:
        load_suite(suite)
    text = str(err.value)
    assert "s.yaml: axes.cluster.mode: 'listed' is for cluster.version only" in text
    assert (
        "s.yaml: axes.producer.acks: expected a list of values, or 'listed' "
        "(cluster.version only), not 'built'"
    ) in text
    for path in two_files:
        path.unlink()
    suite.write_text(f"suite: s\nroot: ..\nexperiments: [exp/plain.yaml]\n{LISTED}")
    with pytest.raises(SpecError, match=r"axes.cluster.version: 'listed' found no version in"):
        load_suite(suite)


# --- replace ----------------------------------------------------------------------------------

OWN_AXIS = {
    "own.yaml": (
        "name: own\nproducer: {records: 10}\n"
        "matrix:\n"
        "  cluster.mode: [kraft, zookeeper]\n"
        "  cluster.version: [3.9.2, 4.3.1]\n"
        "  producer.acks: [1, all]\n"
        "  exclude:\n"
        "    - {cluster.mode: zookeeper, cluster.version: 4.3.1}\n"
        "    - {producer.acks: 1, cluster.version: 3.9.2}\n"
        "  expect:\n"
        "    - {when: {cluster.version: 4.3.1}, expect: {lost: 0}}\n"
        "    - {when: {cluster.version: [3.9.2, 3.8.1]}, expect: {duplicated: 0}}\n"
    ),
    "pinned.yaml": "name: pinned\ncluster: {version: 3.9.2}\nproducer: {records: 10}\n",
}


def test_replace_gives_an_experiments_own_axis_the_suites_values_in_its_place(
    tmp_path: Path,
) -> None:
    suite = make_tree(
        tmp_path,
        "experiments: ['exp/*.yaml']\naxes: {cluster.version: [3.8.1, 4.3.1]}\n"
        "replace: [cluster.version]\n",
        OWN_AXIS,
    )
    plans = by_name(make_suite_plan(suite))
    own, pinned = plans["own"], plans["pinned"]
    assert own.replaced == {"cluster.version": ["3.8.1", "4.3.1"]}
    assert not own.added and not own.kept
    assert [c.id for c in own.cells] == [
        "01_mode=kraft_version=3.8.1_acks=1",
        "02_mode=kraft_version=3.8.1_acks=all",
        "03_mode=kraft_version=4.3.1_acks=1",
        "04_mode=kraft_version=4.3.1_acks=all",
        "05_mode=zookeeper_version=3.8.1_acks=1",
        "06_mode=zookeeper_version=3.8.1_acks=all",
    ]
    matrix = own.plan.spec.matrix
    assert matrix is not None
    # The exclusion naming 3.9.2, gone from the axis, is dropped; the other one stays.
    assert matrix.exclude == [{"cluster.mode": "zookeeper", "cluster.version": "4.3.1"}]
    # So is the override for 3.9.2 alone; one naming a value the axis still has stays.
    whens = [o.when for o in matrix.expect]
    assert whens == [{"cluster.version": "4.3.1"}, {"cluster.version": ["3.9.2", "3.8.1"]}]
    expect = {c.id: c.spec.expect for c in own.cells}
    assert "lost" in expect["03_mode=kraft_version=4.3.1_acks=1"]
    assert "duplicated" in expect["01_mode=kraft_version=3.8.1_acks=1"]
    # The run folder's spec.yaml expands to exactly these cells (verify works on it).
    again = parse_spec(yaml.safe_load(spec_to_yaml(own.plan.spec, 5)))
    assert [c.id for c in expand_cells(again)] == [c.id for c in own.cells]
    # A value the experiment's file sets is kept even so: it is written for it.
    assert [c.id for c in pinned.cells] == ["01_main"]
    assert pinned.kept == {"cluster.version": "set by the experiment (3.9.2)"}


def test_without_replace_the_experiments_own_axis_is_kept(tmp_path: Path) -> None:
    suite = make_tree(
        tmp_path, "experiments: [exp/own.yaml]\naxes: {cluster.version: [3.8.1]}\n", OWN_AXIS
    )
    (own,) = make_suite_plan(suite).experiments
    assert own.kept == {"cluster.version": "the experiment's own axis (3.9.2, 4.3.1)"}
    assert not own.replaced and len(own.cells) == 4  # 8, less its own two exclusions


def test_replace_names_axes_of_the_suite(tmp_path: Path) -> None:
    suite = make_tree(
        tmp_path,
        "experiments: [exp/plain.yaml]\naxes: {cluster.version: [3.9.2]}\n"
        "replace: [cluster.mode]\n",
        EXPERIMENTS,
    )
    with pytest.raises(SpecError, match=r"replace\[0\]: 'cluster.mode' is not one of the axes"):
        load_suite(suite)


# --- what must be built before a suite runs ---------------------------------------------------


def test_needed_builds_are_every_cells_version_and_the_java_clients_ones(
    tmp_path: Path,
) -> None:
    files = {
        "java.yaml": (
            "name: java\nproducer: {records: 10}\n"
            "matrix: {producer.client: [librdkafka, java], cluster.version: [4.3.1, 3.9.2]}\n"
        ),
        "group.yaml": (
            "name: group\ncluster: {version: 3.8.1}\nproducer: {records: 10}\n"
            "consumer: {kind: group, client: java}\n"
        ),
        "plain.yaml": "name: plain\ncluster: {version: 4.1.2}\nproducer: {records: 10}\n",
        "upgrade.yaml": (  # the version it rolls to needs its image too
            "name: upgrade\ncluster: {version: 3.9.2}\nproducer: {records: 10}\n"
            "faults: [{at_s: 1, kind: upgrade, to_version: 4.2.2}]\n"
        ),
    }
    plan = make_suite_plan(make_tree(tmp_path, "experiments: ['exp/*.yaml']\n", files))
    needs = needed_builds(plan.experiments)
    versions = ("3.8.1", "3.9.2", "4.1.2", "4.2.2", "4.3.1")
    assert needs == Needs(versions, ("3.8.1", "3.9.2", "4.3.1"))


def test_missing_builds_name_them_and_the_commands() -> None:
    needs = Needs(("3.7.2", "3.9.2", "4.4.0"), ("3.9.2", "4.4.0"))

    def probes(image: Any, jars: Any) -> Probes:
        return Probes(image, jars, lambda: True, lambda: True)

    assert missing_builds(needs, probes(lambda v: True, lambda v: True)) == []
    # A probe that cannot tell (Docker does not answer) calls nothing missing.
    assert missing_builds(needs, probes(lambda v: None, lambda v: True)) == []
    lines = missing_builds(needs, probes(lambda v: v == "3.9.2", lambda v: v != "4.4.0"))
    text = "\n".join(lines)
    assert "kafka-chaos/kafka:3.7.2, kafka-chaos/kafka:4.4.0" in text
    assert "java_clients/lib/4.4.0" in text
    assert 'make images VERSIONS="3.7.2 4.4.0"' in text
    assert 'make java-clients VERSIONS="4.4.0"' in text
    assert "make extra-versions" in text and "nothing was run" in text


def test_a_suite_refuses_to_start_when_a_version_is_not_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import harness.suite.builds

    fake = FakeRunner()
    _fake_run_plan(monkeypatch, fake)
    probes = Probes(lambda v: v != "4.3.1", lambda v: True, lambda: True, lambda: True)
    monkeypatch.setattr(harness.suite.builds, "local_probes", lambda: probes)
    suite = make_tree(
        tmp_path / "t",
        "experiments: [exp/plain.yaml]\nseed: 3\naxes: {cluster.version: [3.9.2, 4.3.1]}\n",
    )
    out = tmp_path / "results"
    result = CliRunner().invoke(app, ["run", "--out", str(out), str(suite)])
    assert result.exit_code == EXIT_INFRA, result.output
    assert "kafka-chaos/kafka:4.3.1" in result.output
    assert 'make images VERSIONS="4.3.1"' in result.output
    assert not out.exists()  # nothing ran, no folder
    # --dry-run asks nothing about builds: it plans on any machine.
    dry = CliRunner().invoke(app, ["run", "--dry-run", str(suite)])
    assert dry.exit_code == EXIT_PASS, dry.output


# --- the weekly suite and its workflow --------------------------------------------------------

WEEKLY_SHARD_BUDGET_S = 70 * 60  # planned per shard: the longest experiment is one shard


def test_the_weekly_suite_runs_its_incidents_on_every_listed_version() -> None:
    plan = make_suite_plan(WEEKLY)
    every = listed_versions()
    assert len(every) >= 4 and {"3.9.2", "4.3.1"} <= set(every)
    incidents = [e for e in plan.experiments if e.name != "zk-rolling-upgrade"]
    for e in incidents:
        ran = {(c.spec.cluster.mode, c.spec.cluster.version) for c in e.cells}
        modes = {mode for mode, _ in ran}
        for mode in modes:
            wanted = [v for v in every if mode == "kraft" or v.startswith("3.")]
            assert sorted(v for m, v in ran if m == mode) == sorted(wanted), (e.name, mode)
    names = [e.name for e in plan.experiments]
    assert names == [
        "consumer-offsets-rf1",
        "acks1-leader-loss",
        "controller-failover",
        "unclean-election",
        "zk-rolling-upgrade",
    ]
    # consumer-offsets-rf1's own version axis is replaced, the others get the axis added;
    # the ZooKeeper upgrade pins its versions (3.8.1 -> 3.9.2) and runs once.
    assert by_name(plan)["consumer-offsets-rf1"].replaced == {"cluster.version": every}
    upgrade = by_name(plan)["zk-rolling-upgrade"]
    assert [(c.spec.cluster.mode, c.spec.cluster.version) for c in upgrade.cells] == [
        ("zookeeper", "3.8.1")
    ]


def test_the_weekly_workflow_builds_the_extra_versions_and_merges_its_shards() -> None:
    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "weekly.yml").read_text())
    jobs = flow["jobs"]
    assert "schedule" in flow[True] and "workflow_dispatch" in flow[True]  # `on:` reads as True
    shards = jobs["shard"]["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1))
    steps = [str(s.get("run", "")) for s in jobs["shard"]["steps"]]
    build = next(i for i, s in enumerate(steps) if "make extra-versions" in s)
    run = next(i for i, s in enumerate(steps) if "make weekly" in s)
    assert steps.index("make setup") < build < run
    assert "--shard ${{ matrix.shard }}/${{ strategy.job-total }}" in steps[run]
    results = jobs["results"]
    assert results["needs"] == ["shard"] and results["if"] == "always()"
    assert "make weekly-merge" in " ".join(str(s.get("run", "")) for s in results["steps"])
    whole = make_suite_plan(WEEKLY)
    parts = [make_suite_plan(WEEKLY, shard=Shard(k, len(shards))) for k in shards]
    assert sum(p.cell_count for p in parts) == whole.cell_count
    assert all(0 < p.planned_s <= WEEKLY_SHARD_BUDGET_S for p in parts), [
        p.planned_s for p in parts
    ]


def test_the_weekly_suite_validates_and_shows_where_its_versions_come_from() -> None:
    result = CliRunner().invoke(app, ["validate", str(WEEKLY)])
    assert result.exit_code == EXIT_PASS, result.output
    assert "(listed: docker/versions.txt + docker/versions-extra.txt)" in result.output
    assert "~ cluster.version:" in result.output  # consumer-offsets-rf1's, replaced
    assert json.dumps(listed_versions())  # the files parse
