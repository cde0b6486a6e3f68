"""The explore loop with a fake runner, the repro file (it validates and round-trips), the
explore summary, and `harness explore`'s argument errors (nothing is started)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from harness.cli import app
from harness.explore.budget import Budget
from harness.explore.generator import with_faults
from harness.explore.oracle import Repeats, Run
from harness.explore.repro import Found, repro_data, write_repro
from harness.explore.search import Search, TrialRun
from harness.explore.summary import ExploreSummary, read_summary, write_summary
from harness.spec import Cell, Spec, expand_cells, load_spec
from harness.spec.explore_roles import Entry

SPEC: dict[str, Any] = {
    "name": "explore-unsafe",
    "description": "acks=1, min ISR 1: a lost leader loses acknowledged records.",
    "cluster": {"mode": "kraft", "version": "3.9.2", "brokers": 3},
    "topic": {"name": "chaos", "partitions": 1, "replication_factor": 3},
    "producer": {"acks": 1, "rate": 300, "duration_s": 40},
    "consumer": {"kind": "group", "group": "chaos-group", "members": 1},
    "expect": {"lost": 0, "max_stall_s": "< 60"},
    "explore": {"kinds": ["kill", "isolate", "pause"], "max_faults": 3},
    "matrix": {"producer.acks": [1, "all"]},
}


def cells(tmp_path: Path, data: dict[str, Any] = SPEC) -> list[Cell]:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return expand_cells(load_spec(path), str(path))


def fake_cluster(cell: Cell, faults: list[Entry], label: str) -> TrialRun:
    """acks=1 loses records when the partition's leader is killed or isolated, else nothing."""
    lossy = cell.spec.producer.acks == "1" and any(
        f["kind"] in ("kill", "isolate") and str(f["target"]).startswith(("leader-of", "broker:1"))
        for f in faults
    )
    lost = 812 if lossy else 0
    checks = [
        {"name": "run", "verdict": "pass", "detail": "every phase ran"},
        {"name": "lost", "verdict": "fail" if lost else "pass", "detail": f"lost = {lost}"},
        {"name": "max_stall_s", "verdict": "pass", "detail": "max_stall_s = 3"},
    ]
    return TrialRun(checks, "fail" if lost else "pass", f"/runs/{label}")


def summary_of() -> ExploreSummary:
    return ExploreSummary(
        spec="explore-unsafe", file="spec.yaml", seed=5, started="now", k=3, need=2, budget={}
    )


def test_explore_finds_shrinks_and_writes_a_repro_that_validates(tmp_path: Path) -> None:
    found = Search(cells(tmp_path), 5, fake_cluster, tmp_path / "out", Budget(cells=80))
    summary = found.explore(summary_of())
    assert summary.trials and summary.verdict == "fail"
    assert all(t.cell.startswith(("1_", "2_", "01_", "02_")) for t in summary.trials)
    first = summary.violations[0]
    assert first.property == "lost" and first.cell.startswith("01_")
    assert first.shrunk is not None and len(first.shrunk.faults) == 1
    assert first.shrunk.reproduced == "3/3" and first.shrunk.file is not None
    repro = load_spec(first.shrunk.file)  # the project's own loader
    assert repro.seed == 5 and list(repro.expect) == ["lost"]
    assert repro.producer.acks == "1" and repro.matrix is None and repro.explore is None
    assert [f.kind for f in repro.faults] == [first.shrunk.faults[0]["kind"]]
    assert repro.incident is not None and "3/3" in repro.incident.measured
    assert "lost = 812" in repro.incident.measured
    assert Path(first.shrunk.log).exists()
    # the safe twin (acks=all) never violates
    assert all(not t.violated for t in summary.trials if t.cell.startswith("02_"))
    # coverage: kind x role x phase, counted
    assert sum(r.trials for r in summary.coverage) >= len(summary.trials)
    path = write_summary(tmp_path, summary)
    assert read_summary(path) == summary


def test_the_safe_spec_finds_nothing_within_its_budget(tmp_path: Path) -> None:
    safe = {**SPEC, "matrix": None, "producer": {**SPEC["producer"], "acks": "all"}}
    safe = {k: v for k, v in safe.items() if v is not None}
    budget = Budget(cells=8)
    summary = Search(cells(tmp_path, safe), 9, fake_cluster, tmp_path, budget).explore(summary_of())
    assert len(summary.trials) == 8 and not summary.violations
    assert summary.verdict == "pass" and summary.budget["cells_run"] == 8


def test_the_repro_round_trips_to_the_cell_it_reproduces(tmp_path: Path) -> None:
    cell = cells(tmp_path)[0]
    faults = [{"at_s": 8.0, "kind": "isolate", "target": "leader-of:chaos/0", "duration_s": 5.0}]
    run = Run({"lost": "fail"}, "lost = 6485, expected == 0", True)
    found = Found("lost", 11, 11, 3, cell.id, faults * 2, faults, Repeats((run,) * 3, 2), "d")
    path = write_repro(tmp_path, cell.spec, found)
    loaded = load_spec(path)
    want = with_faults(cell.spec, faults).model_copy(
        update={
            "name": loaded.name,
            "description": loaded.description,
            "seed": 11,
            "incident": loaded.incident,
            "explore": None,
            "expect": {"lost": cell.spec.expect["lost"]},
        }
    )
    assert loaded.model_dump() == want.model_dump()
    data = repro_data(cell.spec, found)
    assert list(data)[:4] == ["name", "description", "seed", "incident"]
    assert list(data)[-2:] == ["faults", "expect"]
    assert set(data["incident"]) == {"claim", "measured"}  # the incident files' schema
    assert data["cluster"]["version"] == "3.9.2"  # pinned, though the default


def test_a_spec_without_a_consumer_key_keeps_none_in_the_repro(tmp_path: Path) -> None:
    spec: Spec = cells(tmp_path)[0].spec
    plain = spec.model_copy(update={"consumer": None, "consumers": None})
    run = Run({"lost": "fail"}, "lost = 1", True)
    found = Found("lost", 1, 1, 0, "01_main", [], [], Repeats((run,) * 2, 2), "d")
    data = repro_data(plain, found)
    assert "consumer" not in data
    Spec.model_validate(data)


# --- the command line: argument errors only (a real run needs clusters) ---------------------
@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--budget-cells", "3", "--budget-minutes", "5"], "not both"),
        (["--runs", "2", "--need", "3"], "--need 3 is more than --runs 2"),
        (["--budget-cells", "0"], "--budget-cells"),
        (["--seed", "-1"], "--seed"),
    ],
)
def test_explore_argument_errors(tmp_path: Path, args: list[str], said: str) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(SPEC), encoding="utf-8")
    result = CliRunner().invoke(app, ["explore", str(path), *args])
    assert result.exit_code == 2
    assert said in result.output


def test_explore_refuses_a_suite_and_a_bad_spec(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text("suite:\n  name: s\n  experiments: []\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["explore", str(suite)])
    assert result.exit_code == 2 and "suite file" in result.output
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({**SPEC, "explore": {"max_faults": 0}}), encoding="utf-8")
    result = CliRunner().invoke(app, ["explore", str(bad)])
    assert result.exit_code == 2 and "explore.max_faults" in result.output


def test_validate_prints_the_first_schedules(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump({**SPEC, "seed": 3}), encoding="utf-8")
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    assert "first 3 schedules (seed 3," in result.output and "trial 2:" in result.output
