"""The result-folder contract (harness.results): a leaf the checks can import alone."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from harness.results.consumers import ConsumerRef, set_of
from harness.results.layout import CellPaths, RunPaths, query_dir
from harness.results.member_files import (
    COMMITS_CSV,
    CONSUMED_CSV,
    CommitLine,
    ConsumedLine,
    MemberPaths,
)
from harness.results.member_tables import commits_tables, consumed_tables
from harness.results.tables import COMMITS, CONSUMED, concat
from harness.results.verdicts import as_verdict, worst

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "harness" / "results"


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", sorted(RESULTS.glob("*.py")), ids=lambda p: p.name)
def test_the_contract_imports_nothing_else_of_the_harness(path: Path) -> None:
    outside = {m for m in _imported_modules(path) if m.split(".")[0] == "harness"} - {
        m for m in _imported_modules(path) if m.startswith("harness.results")
    }
    assert not outside, f"{path.name} imports {sorted(outside)}"


def _loaded_after(statement: str) -> list[str]:
    code = (
        f"import sys; {statement}; "
        "print('\\n'.join(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('docker', 'testcontainers', 'confluent_kafka', 'harness', 'spark_jobs'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return out.stdout.split()


RUN_SIDE = (
    "harness.spec",
    "harness.workload",
    "harness.cluster",
    "harness.nodes",
    "harness.faults",
)
DOCKER = ("docker", "testcontainers", "confluent_kafka")


def test_the_checks_load_only_the_contract() -> None:
    loaded = _loaded_after("import spark_jobs.verify, spark_jobs.cell_data")
    bad = [m for m in loaded if m.split(".")[0] in DOCKER or m.startswith(RUN_SIDE)]
    assert not bad
    harness = {m for m in loaded if m.split(".")[0] == "harness"}
    assert harness <= {"harness", "harness.errors"} | {
        m for m in harness if m.startswith("harness.results")
    }


def test_the_spark_consumer_process_does_not_load_docker() -> None:
    loaded = _loaded_after("import harness.workload.spark.member")
    assert not [m for m in loaded if m.split(".")[0] in DOCKER]


def test_verdicts_and_reports_do_not_load_docker() -> None:
    loaded = _loaded_after("import harness.report, harness.verdict.checks")
    assert not [m for m in loaded if m.split(".")[0] in DOCKER]


def test_consumer_ref() -> None:
    ref = ConsumerRef.parse("group/m0")
    assert (ref.set_name, ref.member, str(ref), ref.file_stem) == (
        "group",
        "m0",
        "group/m0",
        "group-m0",
    )
    assert ref.index is None and ConsumerRef.parse("group2/3").index == 3
    assert set_of("spark/q") == "spark" and set_of("solo") == "solo"
    for bad in ("group", "/m0", "group/", "a/b/c"):
        with pytest.raises(ValueError, match="<set>/<member>"):
            ConsumerRef.parse(bad)


def test_member_files_are_named_by_the_ref(tmp_path: Path) -> None:
    paths = CellPaths(tmp_path).member("spark/q")
    assert paths == MemberPaths(tmp_path / "consumers", "spark/q")
    assert paths.consumed.name == "spark-q.consumed.csv"
    assert paths.events.name == "spark-q.events.jsonl"


def test_csv_columns_are_named_once(tmp_path: Path) -> None:
    assert CONSUMED_CSV == ("seq", "partition", "offset", "ts", "generation")
    assert COMMITS_CSV == ("partition", "offset", "ts")
    paths = MemberPaths(tmp_path, "group/m0")
    line = ConsumedLine(seq=7, partition=2, offset=30, ts=1000, generation=3)
    paths.consumed.write_text(line.csv() + "x,y\n")
    paths.commits.write_text(CommitLine(partition=2, offset=31, ts=1001).csv())
    [row] = concat(CONSUMED, consumed_tables(paths)).to_pylist()
    assert row == {**line._asdict(), "consumer": "group/m0"}
    [commit] = concat(COMMITS, commits_tables(paths)).to_pylist()
    assert commit == {"consumer": "group/m0", "partition": 2, "offset": 31, "ts": 1001}
    assert paths.consumed.read_text().startswith("7,2,30,1000,3\n")  # the file format


def test_layout(tmp_path: Path) -> None:
    run = RunPaths(tmp_path)
    cell = run.cell("01_main")
    assert cell.history == tmp_path / "cells" / "01_main" / "history.jsonl"
    assert cell.query("spark").sink == query_dir(cell.root, "spark") / "sink"
    assert cell.query("spark").checkpoint == cell.root / "spark" / "spark" / "checkpoint"
    assert run.cell_ids() == []
    cell.root.mkdir(parents=True)
    assert run.cell_ids() == ["01_main"]
    assert (run.spec.name, run.summary_md.name, run.junit.name) == (
        "spec.yaml",
        "summary.md",
        "junit.xml",
    )


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ([], "unknown"),
        (["pass"], "pass"),
        (["pass", "unknown"], "unknown"),
        (["unknown", "fail", "pass"], "fail"),
    ],
)
def test_worst(verdicts: list[str], expected: str) -> None:
    assert worst(verdicts) == expected


def test_worst_refuses_a_non_verdict_and_as_verdict_reads_it_as_unknown() -> None:
    with pytest.raises(ValueError, match="not one of pass, fail, unknown"):
        worst(["ok"])
    assert as_verdict("ok") == "unknown" and as_verdict(None) == "unknown"
    assert as_verdict("fail") == "fail"


def _written_kinds() -> set[str]:
    """Event kinds written as literals anywhere in harness/: `<...>.history.append("kind", …)`
    and a consumer process's `event(…)` / `events(…)` log."""
    kinds: set[str] = set()
    for path in (ROOT / "harness").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            first, func = node.args[0], node.func
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                continue
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            owner = func.value if isinstance(func, ast.Attribute) else None
            owner_name = (
                owner.attr
                if isinstance(owner, ast.Attribute)
                else getattr(owner, "id", "")
                if owner is not None
                else ""
            )
            if (name == "append" and owner_name == "history") or name in ("event", "events"):
                kinds.add(first.value)
    return kinds


def test_every_event_kind_written_is_in_the_contract() -> None:
    from harness.results import events

    named = {v for k, v in vars(events).items() if k.isupper() and isinstance(v, str)}
    written = _written_kinds()
    assert {"fault.inject", "consumer.crash", "recovery.end"} <= written | named
    assert written - named == set()


def test_import_harness_is_light_and_changes_nothing() -> None:
    """The cluster loads on first use of its name; Ryuk is switched off by a start, not an import."""
    code = (
        "import sys, harness; "
        "print(sorted(m for m in ('docker', 'testcontainers', 'harness.cluster') "
        "if m in sys.modules)); "
        "print(harness.KafkaCluster.__module__, 'docker' in sys.modules); "
        "from testcontainers.core.config import testcontainers_config as c; "
        "print(c.ryuk_disabled)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split("\n")[:3] == [
        "[]",
        "harness.cluster.kafka_cluster True",
        "False",
    ]
