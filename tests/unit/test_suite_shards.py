"""A suite split into shards (`run SUITE --shard K/N`) and merged back (`merge-shards`): the
assignment, the parts, and a merge that never lets a missing shard pass (no Docker)."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from harness.cli import app
from harness.cli.terminal import EXIT_INFRA, EXIT_PASS, EXIT_USAGE
from harness.errors import ConfigError
from harness.results.layout import SuitePaths
from harness.suite.index_inputs import suite_folders
from harness.suite.plan import make_suite_plan
from harness.suite.runner import SuiteResult, merge_shards, run_suite
from harness.suite.shards import Shard, assign_shards
from tests.unit.suite_folders import FakeRunner
from tests.unit.test_suite_cli import _fake_run_plan
from tests.unit.test_suite_plan import VERSIONS, make_tree

SUITE_BODY = (
    "experiments: [exp/plain.yaml, exp/modes.yaml, exp/pinned-zk.yaml, exp/own-versions.yaml]\n"
    f"seed: 9\naxes: {{{VERSIONS}}}\n"
)


def suite(tmp_path: Path, body: str = SUITE_BODY) -> Path:
    return make_tree(tmp_path / "tree", body)


def run_shards(
    tmp_path: Path, count: int, fake: FakeRunner, only: list[int] | None = None
) -> list[SuiteResult]:
    out = []
    for k in only or range(1, count + 1):
        plan = make_suite_plan(suite(tmp_path), shard=Shard(k, count))
        out.append(run_suite(plan, tmp_path / "shards", fake, lambda _: None))
    return out


def cells_by_experiment(summary: dict[str, object]) -> dict[str, list[tuple[str, str]]]:
    return {
        e["experiment"]: [(c["cell"], c["verdict"]) for c in e["cells"]]
        for e in summary["experiments"]  # type: ignore[attr-defined]
    }


# --- the assignment ------------------------------------------------------------------------


def test_longest_first_onto_the_least_planned_shard() -> None:
    planned = [("a", 10.0), ("b", 40.0), ("c", 30.0), ("d", 20.0), ("e", 0.0), ("f", 25.0)]
    # b onto 1 (40), c onto 2 (30), f onto 2 (55), d onto 1 (60), a onto 2 (65); e (0 s) on 1
    assert assign_shards(planned, 2) == [2, 1, 2, 1, 1, 2]
    assert assign_shards(planned, 1) == [1, 1, 1, 1, 1, 1]
    # more shards than work: the empty item stays on 1, the rest spread, ties to the lower shard
    assert assign_shards([("x", 5.0), ("y", 5.0)], 3) == [1, 2]


@pytest.mark.parametrize("text", ["0/2", "3/2", "2", "a/b", "1/0", "-1/2"])
def test_a_bad_shard_is_an_error_naming_it(text: str) -> None:
    with pytest.raises(ConfigError, match="--shard"):
        Shard.parse(text)


def test_shard_spelling() -> None:
    assert Shard.parse(" 2 / 4 ") == Shard(2, 4) and str(Shard(2, 4)) == "2/4"


def test_shards_need_a_seed_they_agree_on(tmp_path: Path) -> None:
    no_seed = suite(tmp_path, SUITE_BODY.replace("seed: 9\n", ""))
    with pytest.raises(ConfigError, match="same seed"):
        make_suite_plan(no_seed, shard=Shard(1, 2))
    assert make_suite_plan(no_seed, seed=3, shard=Shard(1, 2)).seed == 3


def test_every_experiment_in_exactly_one_shard(tmp_path: Path) -> None:
    whole = make_suite_plan(suite(tmp_path))
    parts = [make_suite_plan(suite(tmp_path), shard=Shard(k, 3)) for k in (1, 2, 3)]
    names = [e.name for p in parts for e in p.mine]
    assert sorted(names) == sorted(e.name for e in whole.experiments)
    assert sum(p.cell_count for p in parts) == whole.cell_count
    assert sum(p.planned_s for p in parts) == pytest.approx(whole.planned_s)
    assert all(p.total_planned_s == pytest.approx(whole.planned_s) for p in parts)
    # the same plan in every shard: each agrees on every experiment's shard
    assert len({tuple(e.shard for e in p.experiments) for p in parts}) == 1


# --- the parts and the merge ---------------------------------------------------------------


def test_a_shard_is_a_suite_folder_marked_as_a_part_without_history(tmp_path: Path) -> None:
    (result,) = run_shards(tmp_path, 2, FakeRunner(), only=[2])
    assert result.folder.name.endswith("-suite-s-shard-2of2")
    assert result.summary["shard"] == {"index": 2, "count": 2}
    assert result.history is None and not (tmp_path / "shards" / "history.parquet").exists()
    assert suite_folders(tmp_path / "shards") == []  # the index does not show a part as a night


def test_merged_shards_equal_the_whole_run(tmp_path: Path) -> None:
    whole = run_suite(
        make_suite_plan(suite(tmp_path)), tmp_path / "whole", FakeRunner(), lambda _: None
    )
    parts = run_shards(
        tmp_path, 3, FakeRunner({"modes/03_mode=kraft_acks=all_version=3.9.2": "fail"})
    )
    merged = merge_shards([p.folder for p in parts], tmp_path / "results")
    summary = merged.summary
    want = cells_by_experiment(whole.summary)
    want["modes"] = [
        (c, "fail" if c == "03_mode=kraft_acks=all_version=3.9.2" else v) for c, v in want["modes"]
    ]
    assert cells_by_experiment(summary) == want  # same experiments, same order, same cells
    assert summary["verdict"] == "fail" and summary["seed"] == 9
    assert [s["finished"] for s in summary["shards"]] == [True, True, True]
    assert summary["duration_s"] == max(p.summary["duration_s"] for p in parts)
    paths = SuitePaths(merged.folder)
    for e in summary["experiments"]:  # every run folder copied in, with its cells
        assert (paths.root / e["run_dir"] / "summary.json").is_file(), e["run_dir"]
    junit = ET.parse(paths.junit).getroot()
    assert int(junit.get("tests", "0")) == sum(len(v) for v in want.values())
    assert int(junit.get("failures", "0")) == 1
    rows = pq.read_table(tmp_path / "results" / "history.parquet").to_pylist()
    assert len(rows) == sum(len(v) for v in want.values())  # appended once, by the merge
    assert [f.folder for f in suite_folders(tmp_path / "results")] == [merged.folder]
    assert "Ran as 3 shards side by side" in paths.summary_md.read_text()


def test_a_shard_that_never_reported_leaves_its_cells_unknown(tmp_path: Path) -> None:
    parts = run_shards(tmp_path, 3, FakeRunner(), only=[1, 3])
    merged = merge_shards([p.folder for p in parts], tmp_path / "results")
    plan2 = make_suite_plan(suite(tmp_path), shard=Shard(2, 3))
    assert plan2.runnable, "the test needs shard 2 to have work"
    lost = {e.name for e in plan2.runnable}
    by_name = {e["experiment"]: e for e in merged.summary["experiments"]}
    for name in lost:
        assert "shard 2/3 was not given to the merge" in by_name[name]["error"]
        assert {c["verdict"] for c in by_name[name]["cells"]} == {"unknown"}
        assert len(by_name[name]["cells"]) == len(
            next(e for e in plan2.runnable if e.name == name).cells
        )
    assert merged.summary["verdict"] == "unknown"
    assert [s["finished"] for s in merged.summary["shards"]] == [True, False, True]


def test_a_shard_killed_before_its_summary_leaves_its_cells_unknown(tmp_path: Path) -> None:
    parts = run_shards(tmp_path, 2, FakeRunner())
    SuitePaths(parts[1].folder).summary.unlink()  # the runner was killed mid-run
    merged = merge_shards([p.folder for p in parts], tmp_path / "results")
    errors = [e["error"] for e in merged.summary["experiments"] if e.get("error")]
    assert errors and all("did not finish: it wrote no summary" in x for x in errors)
    assert merged.summary["verdict"] == "unknown"


def test_a_run_folder_missing_from_a_shard_is_noted_and_its_verdicts_stand(
    tmp_path: Path,
) -> None:
    parts = run_shards(tmp_path, 2, FakeRunner({"plain/01_version=3.9.2": "fail"}))
    gone = next(
        p for p in parts if any(e["experiment"] == "plain" for e in p.summary["experiments"])
    )
    plain = next(e for e in gone.summary["experiments"] if e["experiment"] == "plain")
    shutil.rmtree(gone.folder / plain["run_dir"])
    merged = merge_shards([p.folder for p in parts], tmp_path / "results")
    record = next(e for e in merged.summary["experiments"] if e["experiment"] == "plain")
    assert record["run_dir"] is None and "is missing from" in record["error"]
    assert [c["verdict"] for c in record["cells"]] == ["fail", "pass"]
    assert merged.summary["verdict"] == "fail"


def test_folders_that_are_not_shards_of_one_run_are_refused(tmp_path: Path) -> None:
    parts = run_shards(tmp_path, 2, FakeRunner())
    with pytest.raises(ConfigError, match="given twice"):
        merge_shards([parts[0].folder, parts[0].folder], tmp_path / "r1")
    other = make_suite_plan(suite(tmp_path), seed=10, shard=Shard(2, 2))
    odd = run_suite(other, tmp_path / "other", FakeRunner(), lambda _: None)
    with pytest.raises(ConfigError, match="not shards of one run: seed"):
        merge_shards([parts[0].folder, odd.folder], tmp_path / "r2")
    whole = run_suite(make_suite_plan(suite(tmp_path)), tmp_path / "w", FakeRunner(), print)
    with pytest.raises(ConfigError, match="not a shard"):
        merge_shards([whole.folder], tmp_path / "r3")


def test_a_shard_summary_whose_experiments_is_not_a_list_is_refused(tmp_path: Path) -> None:
    """Found by the input fuzz: `experiments: 1` in a shard's summary.json crashed the merge."""
    parts = run_shards(tmp_path, 2, FakeRunner())
    summary = SuitePaths(parts[0].folder).summary
    data = json.loads(summary.read_text())
    data["experiments"] = 1
    summary.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="experiments: expected list or null, found 1"):
        merge_shards([p.folder for p in parts], tmp_path / "merged")


def test_a_shard_summary_whose_impossible_cells_are_not_objects_is_refused(
    tmp_path: Path,
) -> None:
    """Found by the input fuzz (CI of 2026-11-28's clean clone): a nested list among an
    experiment's `impossible` entries crashed the merge's summary (`'list' has no .get`)."""
    parts = run_shards(tmp_path, 2, FakeRunner())
    summary = SuitePaths(parts[1].folder).summary
    data = json.loads(summary.read_text())
    data["experiments"][0]["impossible"] = [[[]]]
    summary.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match=r"experiments\[0\]\.impossible\[0\]: expected an object"):
        merge_shards([p.folder for p in parts], tmp_path / "merged")


def test_a_shard_summary_whose_impossible_params_are_not_a_mapping_is_refused(
    tmp_path: Path,
) -> None:
    """Found by the input fuzz (2026-11-29): an impossible cell whose `params` was a list
    crashed the merged summary's Markdown (`'list' object has no attribute 'items'`)."""
    parts = run_shards(tmp_path, 2, FakeRunner())
    summary = SuitePaths(parts[0].folder).summary
    data = json.loads(summary.read_text())
    data["experiments"][0]["impossible"] = [{"params": [{"k": 1}], "reason": "r"}]
    summary.write_text(json.dumps(data))
    with pytest.raises(
        ConfigError, match=r"impossible\[0\]\.params: expected dict or null, found \[\{'k': 1\}\]"
    ):
        merge_shards([p.folder for p in parts], tmp_path / "merged")
    assert not (tmp_path / "merged").exists() or not any((tmp_path / "merged").iterdir())


# --- through the command line --------------------------------------------------------------


def test_shards_and_merge_through_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cli = CliRunner()
    _fake_run_plan(monkeypatch, FakeRunner())
    s = str(suite(tmp_path))
    shards = tmp_path / "shards"
    for k in (1, 2):
        done = cli.invoke(app, ["run", s, "--shard", f"{k}/2", "--out", str(shards)])
        assert done.exit_code == EXIT_PASS, done.output
        assert "not written by a shard" in done.output
    folders = sorted(str(p) for p in shards.iterdir() if p.is_dir())
    merged = cli.invoke(app, ["merge-shards", *folders, "--out", str(tmp_path / "results")])
    assert merged.exit_code == EXIT_PASS, merged.output
    assert "shard 2/2" in merged.output and (tmp_path / "results" / "index.html").is_file()
    only_one = cli.invoke(app, ["merge-shards", folders[0], "--out", str(tmp_path / "r2")])
    assert only_one.exit_code == EXIT_INFRA and "did not report" in only_one.output
    bad = cli.invoke(app, ["run", s, "--shard", "3/2", "--dry-run"])
    assert bad.exit_code == EXIT_USAGE and "--shard '3/2'" in bad.output


def test_a_shard_with_no_experiment_runs_nothing_and_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeRunner()
    _fake_run_plan(monkeypatch, fake)
    s = str(suite(tmp_path))
    count = len(make_suite_plan(s).experiments) + 1
    done = CliRunner().invoke(
        app, ["run", s, "--shard", f"{count}/{count}", "--out", str(tmp_path / "o")]
    )
    assert done.exit_code == EXIT_PASS, done.output
    assert "no experiment falls to it" in done.output
    assert fake.calls == [] and not (tmp_path / "o").exists()
    # the merge of the others: that shard is empty, not missing, and the run passes
    parts = [
        run_suite(make_suite_plan(s, shard=Shard(k, count)), tmp_path / "p", fake, print)
        for k in range(1, count)
    ]
    merged = merge_shards([p.folder for p in parts if p.summary["experiments"]], tmp_path / "r")
    assert merged.summary["verdict"] == "pass"
    assert merged.summary["shards"][-1] == {
        "index": count,
        "count": count,
        "folder": None,
        "finished": True,
        "empty": True,
    }


def test_dry_run_of_a_shard_shows_only_its_experiments(tmp_path: Path) -> None:
    s = str(suite(tmp_path))
    plan = make_suite_plan(s, shard=Shard(1, 2))
    done = CliRunner().invoke(app, ["run", s, "--shard", "1/2", "--dry-run"])
    assert done.exit_code == EXIT_PASS, done.output
    assert "shard 1/2:" in done.output
    others = [e.name for e in plan.experiments if e not in plan.mine]
    assert others and all(f"] {name} " not in done.output for name in others)


# --- the nightly workflow ------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
NIGHTLY_SUITE = ROOT / "experiments" / "suites" / "nightly.yaml"
SHARD_BUDGET_S = 50 * 60  # planned (not measured) per shard: the nightly's 75-minute target


def test_the_nightly_workflow_runs_every_shard_and_merges_them() -> None:
    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "nightly.yml").read_text())
    jobs = flow["jobs"]
    shards = jobs["shard"]["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1))
    steps = " ".join(str(s.get("run", "")) for s in jobs["shard"]["steps"])
    assert "--shard ${{ matrix.shard }}/${{ strategy.job-total }}" in steps
    results = jobs["results"]
    assert results["needs"] == ["shard", "explore"] and results["if"] == "always()"
    assert "make nightly-merge" in " ".join(str(s.get("run", "")) for s in results["steps"])
    whole = make_suite_plan(NIGHTLY_SUITE)
    parts = [make_suite_plan(NIGHTLY_SUITE, shard=Shard(k, len(shards))) for k in shards]
    assert sum(p.cell_count for p in parts) == whole.cell_count
    assert all(0 < p.planned_s <= SHARD_BUDGET_S for p in parts), [p.planned_s for p in parts]


def test_a_shard_confirms_flips_against_the_history_in_its_out_and_the_merge_keeps_them(
    tmp_path: Path,
) -> None:
    """The nightly workflow puts the history in each shard's --out (it appends nothing)."""
    run_suite(make_suite_plan(suite(tmp_path)), tmp_path / "shards", FakeRunner(), print)
    flips = FakeRunner({"modes/03_mode=kraft_acks=all_version=3.9.2": ["fail", "pass"]})
    parts = run_shards(tmp_path, 2, flips)
    merged = merge_shards([p.folder for p in parts], tmp_path / "results")
    assert merged.summary["verdict"] == "pass"
    assert merged.summary["flaky"] == [
        {"experiment": "modes", "cell": "03_mode=kraft_acks=all_version=3.9.2"}
    ]
    (modes,) = [e for e in merged.summary["experiments"] if e["experiment"] == "modes"]
    (rerun,) = modes["confirmations"][0]["reruns"]
    assert rerun["run_dir"].startswith("confirm/")
    assert (merged.folder / rerun["run_dir"] / "summary.json").is_file()
    rows = pq.read_table(tmp_path / "results" / "history.parquet").to_pylist()
    assert [r["confirmation"] for r in rows if r["confirmation"]] == ["flaky"]
