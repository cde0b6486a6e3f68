"""Suite planning without Docker: globs, axes added or kept, impossible cells, seeds, times."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.errors import ConfigError
from harness.spec import SpecError, expand_cells, parse_spec, spec_to_yaml
from harness.suite.estimate import (
    CLUSTER_START_S,
    EXPERIMENT_S,
    SETTLE_S,
    SPARK_START_S,
    STEADY_STATE_S,
    estimate_cell_s,
)
from harness.suite.model import is_suite_file, load_suite
from harness.suite.plan import ExperimentPlan, SuitePlan, make_suite_plan

ROOT = Path(__file__).resolve().parents[2]
VERSIONS = "cluster.version: [3.9.2, 4.3.1]"

EXPERIMENTS = {
    "plain.yaml": "name: plain\nproducer: {records: 100, rate: 10}\nexpect: {lost: 0}\n",
    "modes.yaml": (
        "name: modes\nproducer: {duration_s: 30}\n"
        "faults: [{at_s: 5, kind: kill, target: 'broker:1', duration_s: 40}]\n"
        "matrix:\n  cluster.mode: [kraft, zookeeper]\n  producer.acks: [1, all]\n"
        "  exclude: [{cluster.mode: zookeeper, producer.acks: 1}]\n"
    ),
    "pinned-zk.yaml": "name: pinned-zk\ncluster: {mode: zookeeper}\nproducer: {records: 10}\n",
    "own-versions.yaml": (
        "name: own-versions\nseed: 42\nproducer: {records: 10}\n"
        "matrix: {cluster.version: ['3.9.2']}\n"
    ),
    "pinned-version.yaml": (
        "name: pinned-version\ncluster: {version: 3.9.2}\nproducer: {records: 10}\n"
    ),
}


def make_tree(tmp_path: Path, suite_body: str, files: dict[str, str] | None = None) -> Path:
    """tmp/exp/<experiments>, tmp/suites/s.yaml with `root: ..`; returns the suite file."""
    (tmp_path / "exp").mkdir(parents=True, exist_ok=True)
    for name, text in (files if files is not None else EXPERIMENTS).items():
        (tmp_path / "exp" / name).write_text(text)
    (tmp_path / "suites").mkdir(exist_ok=True)
    suite = tmp_path / "suites" / "s.yaml"
    suite.write_text("suite: s\nroot: ..\n" + suite_body)
    return suite


def by_name(plan: SuitePlan) -> dict[str, ExperimentPlan]:
    return {e.name: e for e in plan.experiments}


# --- globs ------------------------------------------------------------------------------------


def test_globs_in_order_each_sorted_once_and_skip(tmp_path: Path) -> None:
    suite = make_tree(
        tmp_path,
        "experiments: [exp/pinned-*.yaml, 'exp/*.yaml']\nskip: [exp/own-*.yaml]\n",
    )
    loaded = load_suite(suite)
    assert [loaded.shown(f) for f in loaded.files] == [
        "exp/pinned-version.yaml",
        "exp/pinned-zk.yaml",
        "exp/modes.yaml",
        "exp/plain.yaml",
    ]
    assert loaded.root == tmp_path.resolve()


def test_root_defaults_to_the_suite_files_folder(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(EXPERIMENTS["plain.yaml"])
    suite = tmp_path / "s.yaml"
    suite.write_text("suite: s\nexperiments: ['*.yaml']\n")
    assert [f.name for f in load_suite(suite).files] == ["a.yaml"]  # not itself: a suite file


def test_a_glob_that_matches_nothing_is_an_error_naming_it(tmp_path: Path) -> None:
    suite = make_tree(tmp_path, "experiments: [exp/*.yaml, exp/nope/*.yaml]\nskip: [x.yaml]\n")
    with pytest.raises(SpecError) as err:
        load_suite(suite)
    text = str(err.value)
    assert "s.yaml: experiments[1]: 'exp/nope/*.yaml' matches no file" in text
    assert "s.yaml: skip[0]: 'x.yaml' matches no file" in text


def test_a_suite_file_matched_by_a_glob_is_an_error(tmp_path: Path) -> None:
    suite = make_tree(tmp_path, "experiments: ['suites/*.yaml', 'exp/*.yaml']\n")
    (tmp_path / "suites" / "other.yaml").write_text("suite: other\nexperiments: [a]\n")
    with pytest.raises(SpecError, match=r"other.yaml is a suite file, not an experiment"):
        load_suite(suite)


def test_suite_file_errors_name_file_and_key(tmp_path: Path) -> None:
    suite = make_tree(
        tmp_path,
        "experiments: []\nseed: -1\ncolour: red\naxes:\n  cluster.colour: [red]\n"
        "  producer.acks: []\n  exclude: [x]\n",
    )
    with pytest.raises(SpecError) as err:
        load_suite(suite)
    text = str(err.value)
    assert "s.yaml: experiments:" in text and "s.yaml: seed: expected >= 0" in text
    assert "s.yaml: colour: unknown key; allowed: suite, description, seed, root" in text
    suite.write_text(
        "suite: s\nroot: ..\nexperiments: ['exp/*.yaml']\naxes:\n  cluster.colour: [red]\n"
        "  producer.acks: []\n  exclude: [x]\n"
    )
    with pytest.raises(SpecError) as err:
        load_suite(suite)
    text = str(err.value)
    assert "s.yaml: axes.cluster.colour: unknown path: cluster has no field 'colour'" in text
    assert "s.yaml: axes.producer.acks: expected a non-empty list of values" in text
    assert "s.yaml: axes.exclude: not an axis" in text


def test_is_suite_file(tmp_path: Path) -> None:
    suite = make_tree(tmp_path, "experiments: ['exp/*.yaml']\n")
    assert is_suite_file(suite)
    assert not is_suite_file(tmp_path / "exp" / "plain.yaml")
    assert not is_suite_file(tmp_path / "missing.yaml")


# --- axes -------------------------------------------------------------------------------------


def test_axis_added_to_an_experiment_without_a_matrix(tmp_path: Path) -> None:
    plan = make_suite_plan(
        make_tree(tmp_path, f"experiments: [exp/plain.yaml]\naxes: {{{VERSIONS}}}\n")
    )
    (e,) = plan.experiments
    assert [c.id for c in e.cells] == ["01_version=3.9.2", "02_version=4.3.1"]
    assert [c.spec.cluster.version for c in e.cells] == ["3.9.2", "4.3.1"]
    assert e.added == {"cluster.version": ["3.9.2", "4.3.1"]} and not e.kept
    assert not e.impossible and not e.left_out


def test_axis_after_the_experiments_own_and_impossible_cells_left_out(tmp_path: Path) -> None:
    plan = make_suite_plan(
        make_tree(tmp_path, f"experiments: [exp/modes.yaml]\naxes: {{{VERSIONS}}}\n")
    )
    (e,) = plan.experiments
    assert [c.id for c in e.cells] == [
        "01_mode=kraft_acks=1_version=3.9.2",
        "02_mode=kraft_acks=1_version=4.3.1",
        "03_mode=kraft_acks=all_version=3.9.2",
        "04_mode=kraft_acks=all_version=4.3.1",
        "05_mode=zookeeper_acks=all_version=3.9.2",
    ]
    assert not any(
        c.spec.cluster.mode == "zookeeper" and c.spec.cluster.version == "4.3.1" for c in e.cells
    )
    # Only the combination the experiment itself did not exclude is listed as impossible.
    assert [i.params for i in e.impossible] == [
        {"cluster.mode": "zookeeper", "producer.acks": "all", "cluster.version": "4.3.1"}
    ]
    assert "Kafka 4.3.1 has no ZooKeeper mode" in e.impossible[0].reason
    # The experiment's own exclusions are shown as it wrote them (its own axes only).
    assert e.excluded == [{"cluster.mode": "zookeeper", "producer.acks": 1}]


def test_the_merged_spec_round_trips_to_the_same_cells(tmp_path: Path) -> None:
    """spec.yaml of the experiment's run folder expands to exactly the cells that ran (verify)."""
    plan = make_suite_plan(
        make_tree(tmp_path, f"experiments: [exp/modes.yaml]\naxes: {{{VERSIONS}}}\n")
    )
    (e,) = plan.experiments
    again = parse_spec(yaml.safe_load(spec_to_yaml(e.plan.spec, 5)))
    assert [c.id for c in expand_cells(again)] == [c.id for c in e.cells]
    assert {"cluster.mode": "zookeeper", "cluster.version": "4.3.1"} in again.matrix.exclude


def test_axis_kept_when_the_experiment_has_it_or_sets_the_key(tmp_path: Path) -> None:
    suite = make_tree(
        tmp_path,
        f"experiments: [exp/own-versions.yaml, exp/pinned-version.yaml]\naxes: {{{VERSIONS}}}\n",
    )
    plans = by_name(make_suite_plan(suite))
    own, pinned = plans["own-versions"], plans["pinned-version"]
    assert [c.id for c in own.cells] == ["01_version=3.9.2"]
    assert own.kept == {"cluster.version": "the experiment's own axis (3.9.2)"}
    assert [c.id for c in pinned.cells] == ["01_main"]
    assert pinned.kept == {"cluster.version": "set by the experiment (3.9.2)"}


def test_a_pinned_zookeeper_experiment_keeps_only_its_3x_cells(tmp_path: Path) -> None:
    suite = make_tree(tmp_path, f"experiments: [exp/pinned-zk.yaml]\naxes: {{{VERSIONS}}}\n")
    (e,) = make_suite_plan(suite).experiments
    assert [c.id for c in e.cells] == ["01_version=3.9.2"]
    assert [i.params for i in e.impossible] == [{"cluster.version": "4.3.1"}]


def test_an_experiment_with_no_possible_cell_is_left_out_not_an_error(tmp_path: Path) -> None:
    suite = make_tree(
        tmp_path,
        "experiments: [exp/pinned-zk.yaml, exp/plain.yaml]\naxes: {cluster.version: [4.3.1]}\n",
    )
    plan = make_suite_plan(suite)
    zk, _plain = plan.experiments
    assert zk.cells == [] and "no cell can exist" in zk.left_out and "4.3.1" in zk.left_out
    assert [e.name for e in plan.left_out] == ["pinned-zk"]
    assert [e.name for e in plan.runnable] == ["plain"] and plan.cell_count == 1


def test_several_axes_multiply(tmp_path: Path) -> None:
    suite = make_tree(
        tmp_path,
        f"experiments: [exp/plain.yaml]\naxes:\n  {VERSIONS}\n  producer.acks: [1, all]\n",
    )
    (e,) = make_suite_plan(suite).experiments
    assert [c.id for c in e.cells] == [
        "01_version=3.9.2_acks=1",
        "02_version=3.9.2_acks=all",
        "03_version=4.3.1_acks=1",
        "04_version=4.3.1_acks=all",
    ]


def test_a_suite_value_the_spec_refuses_names_suite_and_key(tmp_path: Path) -> None:
    suite = make_tree(tmp_path, "experiments: [exp/plain.yaml]\naxes: {cluster.brokers: [3, 9]}\n")
    with pytest.raises(SpecError) as err:
        make_suite_plan(suite)
    text = str(err.value)
    assert "exp/plain.yaml (with the axes of suite suites/s.yaml)" in text
    assert "matrix.cluster.brokers" in text and "expected <= 5" in text


def test_a_bad_experiment_is_reported_with_its_file(tmp_path: Path) -> None:
    files = dict(EXPERIMENTS, **{"bad.yaml": "name: bad\nproducer: {acks: 2, records: 1}\n"})
    suite = make_tree(tmp_path, "experiments: ['exp/*.yaml']\n", files)
    with pytest.raises(SpecError, match=r"bad.yaml: producer.acks: expected one of 0, 1, all"):
        make_suite_plan(suite)


# --- seeds, cells filter, estimates -----------------------------------------------------------


def test_seeds_cli_then_experiment_then_suite(tmp_path: Path) -> None:
    suite = make_tree(tmp_path, "experiments: [exp/own-versions.yaml, exp/plain.yaml]\nseed: 7\n")
    plans = by_name(make_suite_plan(suite))
    assert plans["own-versions"].plan.seed == 42 and plans["plain"].plan.seed == 7
    plans = by_name(make_suite_plan(suite, seed=3))
    assert {e.plan.seed for e in plans.values()} == {3}
    suite.write_text("suite: s\nroot: ..\nexperiments: [exp/plain.yaml]\n")
    plan = make_suite_plan(suite)
    assert not plan.seed_given and plan.experiments[0].plan.seed == plan.seed


def test_cells_filter_on_cell_ids_and_experiment_names(tmp_path: Path) -> None:
    suite = make_tree(
        tmp_path, f"experiments: [exp/plain.yaml, exp/modes.yaml]\naxes: {{{VERSIONS}}}\n"
    )
    plan = make_suite_plan(suite, cells_filter="plain/*4.3.1")
    plain, modes = plan.experiments
    assert [c.id for c in plain.cells] == ["02_version=4.3.1"]
    assert modes.cells == [] and "no cell matches --cells" in modes.left_out
    assert set(plain.estimates) == {"02_version=4.3.1"}
    assert set(plain.plan.schedules) == {"02_version=4.3.1"}
    with pytest.raises(ConfigError, match="matches no cell of any experiment"):
        make_suite_plan(suite, cells_filter="nothing-like-this")


def test_estimate_per_cell_and_totals(tmp_path: Path) -> None:
    suite = make_tree(
        tmp_path, f"experiments: [exp/plain.yaml, exp/modes.yaml]\naxes: {{{VERSIONS}}}\n"
    )
    plan = make_suite_plan(suite)
    plain, modes = plan.experiments
    fixed = CLUSTER_START_S + STEADY_STATE_S + SETTLE_S
    # plain: 100 records at 10/s = 10 s of workload; modes: a fault until 45 s > 30 s producer
    assert set(plain.estimates.values()) == {fixed + 10}
    assert set(modes.estimates.values()) == {fixed + 45}
    # each experiment's run adds its own work (the checks' Spark session, the reports) once
    assert plain.planned_s == 2 * (fixed + 10) + EXPERIMENT_S
    assert (
        plan.planned_s
        == plain.planned_s + modes.planned_s
        == pytest.approx(2 * (fixed + 10) + 5 * (fixed + 45) + 2 * EXPERIMENT_S)
    )


def test_estimate_adds_a_spark_querys_start() -> None:
    spec = parse_spec(
        {
            "name": "s",
            "producer": {"duration_s": 20},
            "consumers": [{"kind": "group"}, {"kind": "spark"}],
        }
    )
    assert estimate_cell_s(spec) == CLUSTER_START_S + STEADY_STATE_S + 20 + SETTLE_S + SPARK_START_S


def test_the_default_matrix_estimate_is_near_its_measured_time() -> None:
    """Calibration: 8 cells took 12 min 27 s (747 s) alone on 2026-11-27, third round
    (CHANGELOG.md; 15 min 18 s in 0.1.0)."""
    from harness.spec import load_spec

    cells = expand_cells(load_spec(ROOT / "experiments/default-matrix.yaml"))
    total = sum(estimate_cell_s(c.spec) for c in cells)
    assert 0.8 * 747 < total < 1.2 * 747


# --- the shipped nightly suite ----------------------------------------------------------------


def test_nightly_suite_plans_every_shipped_experiment_on_both_versions() -> None:
    plan = make_suite_plan(ROOT / "experiments/suites/nightly.yaml", seed=1)
    files = {e.file for e in plan.experiments}
    shipped = {
        p.relative_to(ROOT).as_posix()
        for folder in ("experiments", "experiments/incidents", "experiments/operations")
        for p in (ROOT / folder).glob("*.yaml")
    }
    # The ZooKeeper upgrade runs on 3.8.1, which the nightly does not build: the weekly's;
    # the share-group incidents on 4.2.2 too: their own suite's.
    shares = {f for f in shipped if f.startswith("experiments/incidents/share-")}
    assert shares
    assert files == shipped - {"experiments/operations/zk-rolling-upgrade.yaml"} - shares
    cells = [c for e in plan.experiments for c in e.cells]
    assert {c.spec.cluster.version for c in cells} == {"3.9.2", "4.3.1"}
    assert not [
        c for c in cells if c.spec.cluster.mode == "zookeeper" and c.spec.cluster.version != "3.9.2"
    ]
    assert any(e.impossible for e in plan.experiments)  # listed, not run
    names = {e.name: e for e in plan.experiments}
    assert names["consumer-offsets-rf1"].kept == {
        "cluster.version": "the experiment's own axis (3.9.2, 4.3.1)"
    }
    assert plan.planned_s > 0 and plan.cell_count == len(cells)
