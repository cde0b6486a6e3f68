"""Evidence that cannot go missing (issue 25): `verify` judges a run folder against its plan,
reads and writes only the folder's own regular files, and `merge-shards` copies nothing from
outside a shard folder (no Docker, no Spark: the checks are stood in for)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import harness.experiment
import harness.verdict.run_verify
from harness.cli import app
from harness.cli.terminal import EXIT_INFRA, EXIT_PASS, EXIT_USAGE
from harness.errors import ConfigError
from harness.experiment import make_plan, run_plan, verify_run
from harness.report import write_run_summary
from harness.results.history_reader import read_jsonl
from harness.results.layout import (
    CellPaths,
    ResultFolderError,
    RunPaths,
    SuitePaths,
    safe_write_text,
)
from harness.runner.status import Status
from harness.spec import Cell
from harness.suite.plan import make_suite_plan
from harness.suite.runner import merge_shards, run_suite
from harness.suite.shards import Shard
from tests.unit.suite_folders import FakeRunner
from tests.unit.test_suite_shards import suite

cli = CliRunner()
SPEC = "name: m\nseed: 3\nproducer: {records: 10}\nmatrix: {producer.acks: [1, all], topic.partitions: [1, 2]}\n"
ALL = ["01_acks=1_partitions=1", "02_acks=1_partitions=2", "03_acks=all_partitions=1"]
ALL.append("04_acks=all_partitions=2")


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The checks stood in for: every cell verified passes; the cells verified, in order."""
    seen: list[str] = []

    def verify(self: Any, cell: Cell, cell_dir: Path) -> dict[str, Any]:
        seen.append(cell.id)
        summary = {"cell": cell.id, "verdict": "pass", "counts": {}, "checks": []}
        CellPaths(cell_dir).write_text(CellPaths(cell_dir).summary, json.dumps(summary))
        return summary

    monkeypatch.setattr(harness.verdict.run_verify.SparkChecks, "verify", verify)
    return seen


def run_folder(tmp_path: Path, cells: list[str], summary: Any = None) -> Path:
    """A run folder of SPEC holding `cells`; summary.json as given (None: all four passed)."""
    run = tmp_path / "run"
    paths = RunPaths(run)
    paths.cells.mkdir(parents=True)
    paths.spec.write_text(SPEC)
    for cell in cells:
        paths.cell(cell).root.mkdir()
    if summary is None:
        summary = {
            "run_id": "run",
            "verdict": "pass",
            "cells": [{"cell": c, "verdict": "pass"} for c in ALL],
        }
    if summary is not ...:
        text = summary if isinstance(summary, str) else json.dumps(summary)
        paths.summary.write_text(text)
    return run


# --- 1. a run folder is judged against what its run planned --------------------------------


def test_a_run_folder_missing_planned_cells_is_unknown_and_says_which(
    tmp_path: Path, checked: list[str]
) -> None:
    run = run_folder(tmp_path, ALL[:1])
    result = cli.invoke(app, ["verify", str(run)])
    assert result.exit_code == EXIT_INFRA, result.output
    assert "missing cells" in result.output and ALL[3] in result.output
    summary = json.loads(RunPaths(run).summary.read_text())
    assert summary["verdict"] == "unknown"
    assert summary["missing_cells"] == ALL[1:]
    assert [c["cell"] for c in summary["cells"]] == ALL  # never rewritten to fewer cells
    stub = summary["cells"][1]
    assert stub["verdict"] == "unknown" and "missing" in stub["checks"][0]["detail"]
    assert "said pass" in stub["checks"][0]["detail"]
    assert checked == ALL[:1]
    assert "Missing cells" in RunPaths(run).summary_md.read_text()
    assert 'errors="3"' in RunPaths(run).junit.read_text()


def test_without_a_summary_the_plan_is_every_cell_of_the_spec(
    tmp_path: Path, checked: list[str]
) -> None:
    run = run_folder(tmp_path, ALL[:2], summary=...)
    assert verify_run(run)["missing_cells"] == ALL[2:]
    complete = run_folder(tmp_path / "b", ALL, summary=...)
    summary = verify_run(complete)
    assert summary["verdict"] == "pass" and summary["missing_cells"] == []


def test_a_cells_filter_run_records_its_plan_and_verifies_against_it(
    tmp_path: Path, checked: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    class FakeCell:
        def __init__(self, cell: Cell, *args: Any, **kwargs: Any) -> None:
            self.dir = args[2]
            self.status, self.kept = Status(cell.id), None
            self.behind = None  # no collect-behind: the folder is complete after run()

        def run(self) -> None:
            Path(self.dir).mkdir(parents=True)

    monkeypatch.setattr(harness.experiment, "CellRunner", FakeCell)
    spec = tmp_path / "m.yaml"
    spec.write_text(SPEC)
    plan = make_plan(spec, None, "*acks=1*")
    run_dir, summary, _ = run_plan(plan, tmp_path / "out", lambda s: None, lambda s: None)
    assert summary["planned_cells"] == ALL[:2] and summary["cells_filter"] == "*acks=1*"
    again = verify_run(run_dir)  # the cells it was not asked to run are not missing
    assert again["verdict"] == "pass" and again["missing_cells"] == []
    assert again["planned_cells"] == ALL[:2] and again["cells_filter"] == "*acks=1*"
    (run_dir / "cells" / ALL[1] / "summary.json").unlink()
    (run_dir / "cells" / ALL[1]).rmdir()
    gone = verify_run(run_dir)
    assert gone["verdict"] == "unknown" and gone["missing_cells"] == [ALL[1]]


def test_a_suite_run_folder_without_its_own_plan_uses_the_suites(
    tmp_path: Path, checked: list[str]
) -> None:
    suite_dir = tmp_path / "suite"
    run = run_folder(suite_dir / "experiments", ALL[2:], summary={"run_id": "run", "cells": []})
    SuitePaths(suite_dir).suite.write_text(
        yaml.safe_dump({"suite": "s", "experiments": [{"file": "m.yaml", "cells": ALL[2:]}]})
    )
    SuitePaths(suite_dir).summary.write_text(
        json.dumps({"experiments": [{"file": "m.yaml", "run_dir": "experiments/run"}]})
    )
    summary = verify_run(run)
    assert summary["verdict"] == "pass" and summary["missing_cells"] == []


@pytest.mark.parametrize("text", ['{"cells": [', "[]", '{"cells": 5}', '{"planned_cells": "x"}'])
def test_a_malformed_run_summary_is_refused_before_any_check(
    tmp_path: Path, checked: list[str], text: str
) -> None:
    run = run_folder(tmp_path, ALL, summary=text)
    with pytest.raises(ConfigError, match=r"summary\.json"):
        verify_run(run)
    assert checked == [] and RunPaths(run).summary.read_text() == text
    assert not RunPaths(run).cell(ALL[0]).summary.exists()
    result = cli.invoke(app, ["verify", str(run)])
    assert result.exit_code == EXIT_USAGE and "summary.json" in result.output


# --- 4. writes never follow a symlink out of the folder -----------------------------------


def test_writes_replace_a_symlink_instead_of_writing_through_it(
    tmp_path: Path, checked: list[str]
) -> None:
    run = run_folder(tmp_path, ALL)
    victims = {}
    for name in ("summary.md", "junit.xml"):
        victim = tmp_path / f"victim-{name}"
        victim.write_text("keep me")
        (run / name).symlink_to(victim)
        victims[name] = victim
    cell_victim = tmp_path / "victim-cell.json"
    cell_victim.write_text("keep me")
    RunPaths(run).cell(ALL[0]).summary.symlink_to(cell_victim)
    assert verify_run(run)["verdict"] == "pass"
    for name, victim in victims.items():
        assert victim.read_text() == "keep me"
        assert not (run / name).is_symlink() and (run / name).stat().st_size > 0
    assert cell_victim.read_text() == "keep me"
    assert json.loads(RunPaths(run).cell(ALL[0]).summary.read_text())["verdict"] == "pass"


def test_a_write_into_a_folder_that_leads_out_is_refused(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "run" / "cells").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ResultFolderError, match="leads out"):
        safe_write_text(tmp_path / "run", tmp_path / "run" / "cells" / "x.json", "{}")
    assert list((tmp_path / "elsewhere").iterdir()) == []
    write_run_summary(tmp_path / "run", {"run_id": "r"}, [])  # its own files: fine
    assert not list(tmp_path.glob("run/.*.tmp"))


# --- 5. a FIFO in place of a result file is refused, not read forever ----------------------


def finishes(call: Callable[[], Any]) -> BaseException | None:
    """What `call` raised, or fail when it did not return within 10 s (a blocked read)."""
    out: list[BaseException | None] = []

    def target() -> None:
        try:
            call()
            out.append(None)
        except BaseException as exc:
            out.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(10)
    assert out, "the read blocked"
    return out[0]


def test_a_fifo_in_place_of_history_is_refused(tmp_path: Path) -> None:
    from spark_jobs.cell_data import read_history

    fifo = tmp_path / "history.jsonl"
    os.mkfifo(fifo)
    error = finishes(lambda: read_jsonl(fifo))
    assert isinstance(error, ResultFolderError) and str(fifo) in str(error)
    error = finishes(lambda: read_history(fifo))
    assert isinstance(error, ConfigError) and "not a regular file" in str(error)


def test_a_fifo_in_place_of_the_run_summary_exits_2(tmp_path: Path, checked: list[str]) -> None:
    run = run_folder(tmp_path, ALL, summary=...)
    os.mkfifo(RunPaths(run).summary)
    result = cli.invoke(app, ["verify", str(run)])
    assert result.exit_code == EXIT_USAGE and "not a regular file" in result.output
    assert checked == []


# --- 2. merge-shards copies only what is inside the shard folders ---------------------------


def shard_folders(tmp_path: Path) -> list[Path]:
    return [
        run_suite(
            make_suite_plan(suite(tmp_path), shard=Shard(k, 2)),
            tmp_path / "shards",
            FakeRunner(),
            print,
        ).folder
        for k in (1, 2)
    ]


def edit_summary(folder: Path, change: Callable[[dict[str, Any]], None]) -> None:
    path = SuitePaths(folder).summary
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def edit_plan(folder: Path, change: Callable[[dict[str, Any]], None]) -> None:
    path = SuitePaths(folder).suite
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data))


def test_merge_refuses_a_run_dir_outside_the_shard(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "key").write_text("s3cret")
    for n, run_dir in enumerate([str(secret), "../../secret", "experiments/../../../secret"]):
        folders = shard_folders(tmp_path / f"t{n}")

        def point(data: dict[str, Any], to: str = run_dir) -> None:
            data["experiments"][0]["run_dir"] = to

        edit_summary(folders[0], point)
        out = tmp_path / f"out{n}"
        with pytest.raises(ConfigError, match="run_dir"):
            merge_shards(folders, out)
        assert not out.exists()  # checked before anything is written
        result = cli.invoke(app, ["merge-shards", *map(str, folders), "--out", str(out)])
        assert result.exit_code == EXIT_USAGE, result.output


def test_merge_refuses_a_symlink_leading_out_of_the_shard(tmp_path: Path) -> None:
    folders = shard_folders(tmp_path)
    record = json.loads(SuitePaths(folders[0]).summary.read_text())["experiments"][0]
    (tmp_path / "secret").write_text("s3cret")
    (folders[0] / record["run_dir"] / "leak").symlink_to(tmp_path / "secret")
    with pytest.raises(ConfigError, match="leads out"):
        merge_shards(folders, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_merge_bounds_and_checks_the_shard_counts(tmp_path: Path) -> None:
    folders = shard_folders(tmp_path)

    def huge(data: dict[str, Any]) -> None:
        data["shard"]["count"] = 100_000_000

    for f in folders:
        edit_plan(f, huge)
    with pytest.raises(ConfigError, match=r"shard\.count"):
        merge_shards(folders, tmp_path / "out")
    assert not (tmp_path / "out").exists()

    def word(data: dict[str, Any]) -> None:
        data["shard"] = {"index": "one", "count": 2}

    edit_plan(folders[0], word)
    result = cli.invoke(app, ["merge-shards", str(folders[0]), "--out", str(tmp_path / "o")])
    assert result.exit_code == EXIT_USAGE, result.output
    assert "shard.index" in result.output and not (tmp_path / "o").exists()
    with pytest.raises(ConfigError, match="at most"):
        Shard.parse("1/100000000")


def test_merge_into_an_unwritable_out_exits_3_naming_it(tmp_path: Path) -> None:
    folders = shard_folders(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = cli.invoke(app, ["merge-shards", *map(str, folders), "--out", str(blocker / "x")])
    assert result.exit_code == EXIT_INFRA, result.output
    assert str(blocker) in result.output
    good = cli.invoke(app, ["merge-shards", *map(str, folders), "--out", str(tmp_path / "r")])
    assert good.exit_code == EXIT_PASS, good.output
