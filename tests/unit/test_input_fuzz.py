"""Damaged or hostile input is a clear error, never a traceback (issue 25).

Hypothesis drives the CLI in-process (typer's CliRunner) over mutated experiment files
(`validate`, `run --dry-run`) and over summary.json files of random shapes (`compare`,
`index`). Every outcome must be an exit code of the contract (0 pass, 1 flip, 2 malformed
input, 3 infrastructure), a message naming the file, no traceback, and no file written
outside the folders the test gave.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import docker
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

from harness.cli import app
from harness.cli.terminal import EXIT_FAIL, EXIT_INFRA, EXIT_PASS, EXIT_USAGE
from harness.results.layout import SuitePaths
from tests.unit.index_folders import suite_summary
from tests.unit.suite_folders import cell_summary

ROOT = Path(__file__).resolve().parents[2]
BASE_SPEC = ROOT / "tests" / "experiments" / "small-kill.yaml"
FUZZ = settings(
    max_examples=100,
    deadline=None,
    database=None,  # no .hypothesis/ folder in the checkout
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
runner = CliRunner()

# --- values a hostile file may hold -----------------------------------------------------------
_NUMBERS = st.one_of(
    st.integers(),
    st.integers(min_value=10**12, max_value=10**40),
    st.integers(max_value=-1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([math.inf, -math.inf, math.nan, 1e12, 1e20, 1e308, 2**63, 2**64, -0.0]),
)
_SCALARS = st.one_of(
    _NUMBERS,
    st.none(),
    st.booleans(),
    st.text(max_size=30),
    st.sampled_from(["[/x]", "[red]", "", "...", "exact", "< 1e999", "\x00", "é"]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _deep(depth: int) -> Any:
    value: Any = 1
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


_HOSTILE = st.one_of(_VALUES, st.integers(50, 400).map(_deep))


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path in a JSON/YAML tree (the root excluded)."""
    out: list[tuple[Any, ...]] = []
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, child in items:
        out.append((*prefix, key))
        out += _paths(child, (*prefix, key))
    return out


def _replace(tree: Any, path: tuple[Any, ...], value: Any) -> Any:
    tree = json.loads(json.dumps(tree))  # a deep copy
    node = tree
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return tree


@st.composite
def _mutated(draw: st.DrawFn, base: Any) -> Any:
    """`base` with 1-3 values, at random key paths, replaced by hostile ones."""
    tree = base
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(tree)
        if not paths:
            break
        tree = _replace(tree, draw(st.sampled_from(paths)), draw(_HOSTILE))
    return tree


# --- the sandbox ---------------------------------------------------------------------------------
@contextmanager
def _sandbox() -> Iterator[tuple[Path, Path]]:
    """(inputs, cwd): the process works in `cwd`, which must stay empty, and Docker is never
    called (a client that raises stands in for it). Outputs go under `inputs` only when
    asked (`--out`); the checkout itself is shared with other work, so it is not listed."""
    old_cwd = Path.cwd()
    real_from_env, real_init = docker.from_env, docker.DockerClient.__init__

    def no_docker(*_: Any, **__: Any) -> Any:
        raise AssertionError("a Docker client was made")

    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
        inputs, cwd = Path(tmp) / "in", Path(tmp) / "cwd"
        inputs.mkdir()
        cwd.mkdir()
        os.chdir(cwd)
        docker.from_env = no_docker  # type: ignore[assignment]
        docker.DockerClient.__init__ = no_docker  # type: ignore[method-assign]
        try:
            yield inputs, cwd
            assert not os.listdir(cwd), f"written into the working folder: {os.listdir(cwd)}"
        finally:
            docker.from_env = real_from_env  # type: ignore[assignment]
            docker.DockerClient.__init__ = real_init  # type: ignore[method-assign]
            os.chdir(old_cwd)


def _check(result: Result, allowed: set[int], names: str) -> None:
    """An exit code of the contract, no traceback, and an error that names the file."""
    output = result.output
    assert result.exit_code in allowed, (result.exit_code, output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        repr(result.exception),
        output,
        "".join(traceback.format_exception(*result.exc_info)) if result.exc_info else "",
    )
    assert "Traceback" not in output, output
    if result.exit_code == EXIT_USAGE:
        assert names in output.replace("\n", ""), output


def _dump_yaml(data: Any) -> str:
    try:
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    except RecursionError:
        return "name: [" * 60


# --- specs ------------------------------------------------------------------------------------------
BASE = yaml.safe_load(BASE_SPEC.read_text())


@FUZZ
@given(data=_mutated(BASE))
def test_a_mutated_spec_is_valid_or_a_clear_error(data: Any) -> None:
    with _sandbox() as (inputs, _):
        spec = inputs / "spec.yaml"
        spec.write_text(_dump_yaml(data), encoding="utf-8")
        _check(runner.invoke(app, ["validate", str(spec)]), {EXIT_PASS, EXIT_USAGE}, spec.name)
        out = inputs / "results"
        result = runner.invoke(app, ["run", str(spec), "--dry-run", "--out", str(out)])
        _check(result, {EXIT_PASS, EXIT_USAGE}, spec.name)
        assert not out.exists(), "a dry run made a results folder"


@FUZZ
@given(raw=st.binary(max_size=300), text=st.text(max_size=40))
def test_random_bytes_or_a_foreign_encoding_is_a_clear_error(raw: bytes, text: str) -> None:
    with _sandbox() as (inputs, _):
        spec = inputs / "bytes.yaml"
        spec.write_bytes(raw)
        _check(runner.invoke(app, ["validate", str(spec)]), {EXIT_USAGE}, spec.name)
        foreign = inputs / "utf16.yaml"
        foreign.write_bytes(f"name: x{text}\n".encode("utf-16"))
        result = runner.invoke(app, ["validate", str(foreign)])
        _check(result, {EXIT_USAGE}, foreign.name)


_BOUNDED = [
    ("seed", "seed", 10**20),
    ("topic.partitions", "topic", {"partitions": 10**8}),
    ("producer.record_size", "producer", {"records": 10, "record_size": 10**12}),
    ("producer.rate", "producer", {"records": 10, "rate": math.inf}),
    ("producer.duration_s", "producer", {"duration_s": math.nan}),
    ("producer.records", "producer", {"records": 10**10}),
    ("consumer.members", "consumer", {"kind": "group", "members": 100_000}),
    ("faults[0].at_s", "faults", [{"at_s": 1e12, "kind": "kill"}]),
    ("faults[0].duration_s", "faults", [{"at_s": 1, "kind": "kill", "duration_s": 10**12}]),
    ("recovery.timeout_s", "recovery", {"timeout_s": math.inf}),
    ("cluster.broker_config.x", "cluster", {"broker_config": {"x": math.nan}}),
    ("expect.lost", "expect", {"lost": "< 1e999"}),
]


@pytest.mark.parametrize(("path", "key", "value"), _BOUNDED, ids=[b[0] for b in _BOUNDED])
def test_a_number_past_its_bound_names_its_key(
    tmp_path: Path, path: str, key: str, value: Any
) -> None:
    spec = tmp_path / "big.yaml"
    spec.write_text(_dump_yaml({**BASE, key: value}))
    result = runner.invoke(app, ["validate", str(spec)])
    _check(result, {EXIT_USAGE}, spec.name)
    assert f"{path}:" in result.output, result.output


@FUZZ
@given(
    path=st.sampled_from(["topic.partitions", "producer.rate", "faults.0.at_s", "seed"]),
    value=st.one_of(
        st.integers(2**63, 10**30), st.sampled_from([math.inf, -math.inf, math.nan, 1e300])
    ),
)
def test_a_huge_number_anywhere_is_refused(path: str, value: Any) -> None:
    with _sandbox() as (inputs, _):
        parts: list[Any] = [int(p) if p.isdigit() else p for p in path.split(".")]
        spec = inputs / "huge.yaml"
        spec.write_text(_dump_yaml(_replace(BASE, tuple(parts), value)))
        result = runner.invoke(app, ["validate", str(spec)])
        _check(result, {EXIT_USAGE}, spec.name)


def test_a_non_utf8_spec_exits_2_without_a_traceback(tmp_path: Path) -> None:
    spec = tmp_path / "latin1.yaml"
    spec.write_bytes("name: caf\xe9\n".encode("latin-1"))
    done = subprocess.run(
        [sys.executable, "-m", "harness", "validate", str(spec)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == EXIT_USAGE, done.stderr
    assert "Traceback" not in done.stderr and "latin1.yaml" in done.stderr
    assert "not UTF-8" in done.stderr


# --- summaries ----------------------------------------------------------------------------------
SUITE = suite_summary(
    1,
    {
        "acks": [cell_summary("01_acks=1"), cell_summary("02_acks=all", "fail", lost=3)],
        "spark": [cell_summary("01_main", stalls={"group": 2.0, "spark": None})],
    },
)
RUN = {"spec": "acks", "run_id": "R", "verdict": "pass", "cells": SUITE["experiments"][0]["cells"]}


def _json_text(data: Any) -> str:
    try:
        return json.dumps(data)
    except (RecursionError, ValueError):
        return "[" * 100_000  # too deep for any reader


def _suite_folder(results: Path, name: str, summary: Any) -> Path:
    paths = SuitePaths(results / name)
    paths.experiments.mkdir(parents=True)
    paths.suite.write_text("suite: nightly\n")
    paths.summary.write_text(_json_text(summary))
    return paths.root


_SUMMARIES = st.one_of(_mutated(SUITE), _mutated(RUN), _VALUES)


@FUZZ
@given(a=_SUMMARIES, b=_SUMMARIES)
def test_compare_of_any_summaries_is_a_result_or_a_clear_error(a: Any, b: Any) -> None:
    with _sandbox() as (inputs, _):
        folder_a = _suite_folder(inputs, "A", a)
        folder_b = _suite_folder(inputs, "B", b)
        result = runner.invoke(app, ["compare", str(folder_a), str(folder_b)])
        _check(result, {EXIT_PASS, EXIT_FAIL, EXIT_USAGE}, "summary.json")


@FUZZ
@given(summary=_SUMMARIES, history=st.one_of(st.none(), st.binary(max_size=64)))
def test_index_of_any_summary_is_a_page_or_a_clear_error(
    summary: Any, history: bytes | None
) -> None:
    with _sandbox() as (inputs, _):
        results = inputs / "results"
        _suite_folder(results, "20261101T010000Z-suite-nightly", summary)
        if history is not None:
            (results / "history.parquet").write_bytes(history)
        result = runner.invoke(app, ["index", str(results)])
        _check(result, {EXIT_PASS, EXIT_USAGE, EXIT_INFRA}, "results")
        if history is not None:  # never a readable Parquet file
            assert result.exit_code == EXIT_USAGE and "cannot be read" in result.output


_WRONG_SHAPES = [
    ("cells", ["experiments", 0, "cells"], {"01": {}}),
    ("cells", ["experiments", 0, "cells"], "01_main"),
    ("stalls_by_set", ["experiments", 0, "cells", 0, "stalls_by_set"], ["group", 5.0]),
    ("stalls_by_set.group", ["experiments", 0, "cells", 0, "stalls_by_set", "group"], "5 s"),
    ("counts.lost", ["experiments", 0, "cells", 0, "counts", "lost"], [1]),
    ("counts", ["experiments", 0, "cells", 0, "counts"], 7),
    ("experiments[1]", ["experiments", 1], None),
    ("experiments", ["experiments"], {"acks": []}),
    ("max_stall_s", ["experiments", 0, "cells", 0, "max_stall_s"], 10**400),
    ("params", ["experiments", 0, "cells", 0, "params"], ["mode", "kraft"]),
    ("planned_by_cell", ["experiments", 0, "planned_by_cell"], "01"),
]


@pytest.mark.parametrize(
    ("what", "path", "value"), _WRONG_SHAPES, ids=[w[0] for w in _WRONG_SHAPES]
)
def test_a_summary_of_the_wrong_shape_exits_2_naming_file_and_key(
    tmp_path: Path, what: str, path: list[Any], value: Any
) -> None:
    good = _suite_folder(tmp_path, "good", SUITE)
    bad = _suite_folder(tmp_path, "bad", _replace(SUITE, tuple(path), value))
    result = runner.invoke(app, ["compare", str(good), str(bad)])
    _check(result, {EXIT_USAGE}, str(bad / "summary.json"))
    assert what in result.output, result.output
    results = tmp_path / "results"
    _suite_folder(results, "20261101T010000Z-suite-nightly", _replace(SUITE, tuple(path), value))
    result = runner.invoke(app, ["index", str(results)])
    _check(result, {EXIT_USAGE}, "summary.json")
    assert what in result.output, result.output


# --- merge-shards: shard summaries and plans of any shape --------------------------------------
def _shard_template(root: Path) -> list[Path]:
    """Two real shard folders of one suite run (fake cells, no Docker)."""
    from harness.suite.plan import make_suite_plan
    from harness.suite.runner import run_suite
    from harness.suite.shards import Shard
    from tests.unit.suite_folders import FakeRunner
    from tests.unit.test_suite_shards import suite

    return [
        run_suite(
            make_suite_plan(suite(root), shard=Shard(k, 2)), root / "shards", FakeRunner(), print
        ).folder
        for k in (1, 2)
    ]


_SHARD_FILES = st.sampled_from(["summary.json", "suite.yaml"])


@FUZZ
@given(which=st.integers(0, 1), file=_SHARD_FILES, data=st.data())
def test_merge_of_any_shard_is_a_suite_or_a_clear_error(which: int, file: str, data: Any) -> None:
    """A shard's summary or plan with any value at any key: merged, or exit 2/3 naming what
    was wrong, never a traceback, nothing written outside `inputs`, and on exit 2 nothing
    under --out (every shard is checked before anything is written)."""
    import shutil

    with _sandbox() as (inputs, _):
        template = inputs / "template"
        folders = _shard_template(template)
        target = folders[which] / file
        base = (
            json.loads(target.read_text())
            if file == "summary.json"
            else yaml.safe_load(target.read_text())
        )
        mutated = data.draw(st.one_of(_mutated(base), _VALUES))
        target.write_text(_json_text(mutated) if file == "summary.json" else _dump_yaml(mutated))
        out = inputs / "merged"
        result = runner.invoke(app, ["merge-shards", *map(str, folders), "--out", str(out)])
        _check(result, {EXIT_PASS, EXIT_FAIL, EXIT_USAGE, EXIT_INFRA}, "")
        if result.exit_code == EXIT_USAGE:
            assert not out.exists() or not any(out.iterdir()), list(out.iterdir())
        shutil.rmtree(template)


# --- a cell's history: any fields on any event, through the verdict and the report -----------
_EVENT_KINDS = st.sampled_from(
    [
        "phase",
        "fault.inject",
        "fault.heal",
        "fault.skipped",
        "fault.error",
        "consumer.crash",
        "consumer.launch",
        "recovery.end",
        "producer.end",
        "tables.written",
        "log.read",
        "drain.end",
        "cell.error",
    ]
)
_FIELDS = st.sampled_from(
    [
        *("index", "fault_id", "fault", "spec_kind", "at_s", "late_s", "target", "consumer"),
        *("pid", "optional", "recovered", "detail", "phase", "error", "reason", "attempted"),
        "records",
    ]
)
_EVENTS = st.lists(
    st.builds(
        lambda kind, ts, fields: {**fields, "ts": ts, "kind": kind},
        _EVENT_KINDS,
        st.one_of(st.integers(0, 10**6), st.floats(allow_nan=True, allow_infinity=True)),
        st.dictionaries(_FIELDS, _VALUES, max_size=5),
    ),
    max_size=25,
)
HISTORY_SPEC = """name: fuzzhistory
producer: {records: 10}
consumer: {kind: group, members: 2}
faults:
  - {kind: kill, at_s: 1, duration_s: 2}
  - {kind: consumer-crash, at_s: 2, target: 'consumer:group/1', duration_s: 1}
  - {kind: restart, at_s: 3, optional: true}
expect: {lost: 0}
"""


@FUZZ
@given(events=_EVENTS)
def test_any_history_gives_a_verdict_and_a_report_never_a_crash(events: list[Any]) -> None:
    """`summarize` (the checks' verdict, the cell report) reads history.jsonl, which a user
    may hand us damaged: whatever its events hold, a verdict of the three, never an
    exception; an event naming no planned fault's evidence never makes `faults` pass."""
    from harness.results.metrics import COUNT_NAMES
    from harness.spec import expand_cells, load_spec
    from harness.verdict.cell_verdict import summarize

    with _sandbox() as (inputs, _):
        (inputs / "spec.yaml").write_text(HISTORY_SPEC)
        [cell] = expand_cells(load_spec(inputs / "spec.yaml"))
        cell_dir = inputs / "cell"
        cell_dir.mkdir()
        lines = "".join(json.dumps(e, default=str) + "\n" for e in events)
        (cell_dir / "history.jsonl").write_text(lines)
        metrics = {
            "counts": dict.fromkeys(COUNT_NAMES, 0),
            "undecided": {},
            "evidence": {"compared": [], "disagreements": []},
        }
        summary = summarize(cell, cell_dir, metrics)
        assert summary["verdict"] in ("pass", "fail", "unknown")
        faults = {c["name"]: c["verdict"] for c in summary["checks"]}["faults"]
        injected = any(e.get("kind") == "fault.inject" and e.get("index") == 0 for e in events)
        assert faults == "unknown" or injected
