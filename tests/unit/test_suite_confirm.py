"""A suite confirms a flip before it alarms (`--confirm-flips`), with a fake experiment runner:
a night that passes, then a night whose cell flips."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from harness.results.flips import confirmation, counted, is_flip
from harness.results.layout import SuitePaths
from harness.suite.confirm import last_verdicts
from harness.suite.plan import make_suite_plan
from harness.suite.runner import SuiteResult, run_suite
from tests.unit.suite_folders import FakeRunner
from tests.unit.test_suite_plan import VERSIONS, make_tree

CELL = "plain/01_version=3.9.2"


def night(tmp_path: Path, fake: FakeRunner, confirm: int = 1) -> tuple[SuiteResult, list[str]]:
    """One suite run (plain: 2 cells, pinned-zk: 1) into tmp_path/results."""
    suite = make_tree(
        tmp_path / "tree",
        f"experiments: [exp/plain.yaml, exp/pinned-zk.yaml]\nseed: 9\naxes: {{{VERSIONS}}}\n",
    )
    said: list[str] = []
    result = run_suite(
        make_suite_plan(suite), tmp_path / "results", fake, said.append, True, confirm
    )
    return result, said


def confirmations(result: SuiteResult) -> list[dict[str, Any]]:
    return [c for e in result.summary["experiments"] for c in e.get("confirmations") or []]


@pytest.mark.parametrize(
    ("previous", "verdict", "flip"),
    [
        ("pass", "fail", True),
        ("unknown", "fail", True),
        ("fail", "pass", True),
        ("pass", "unknown", False),  # unknown already says "not decided"
        ("fail", "unknown", False),
        ("unknown", "pass", False),
        ("pass", "pass", False),
        (None, "fail", False),  # a new cell: nothing to flip from
    ],
)
def test_what_counts_as_a_flip(previous: str | None, verdict: str, flip: bool) -> None:
    assert is_flip(previous, verdict) is flip


def test_what_the_reruns_make_of_a_flip() -> None:
    assert confirmation("fail", ["fail"]) == "confirmed"
    assert confirmation("fail", ["pass"]) == "flaky"
    assert confirmation("pass", ["fail"]) == "flaky"
    assert confirmation("fail", ["unknown"]) == "unconfirmed"
    assert confirmation("fail", ["unknown", "pass"]) == "flaky"
    assert confirmation("fail", []) == "unconfirmed"
    assert counted("fail", "flaky") == "pass" and counted("fail", "confirmed") == "fail"


def test_the_previous_verdict_is_the_latest_run_of_the_suite_that_had_the_cell() -> None:
    rows = [
        {
            "suite_run": "r2",
            "suite": "s",
            "started": None,
            "experiment": "e",
            "cell": "c",
            "verdict": "fail",
        },
        {
            "suite_run": "r1",
            "suite": "s",
            "started": None,
            "experiment": "e",
            "cell": "c",
            "verdict": "pass",
        },
        {
            "suite_run": "r3",
            "suite": "other",
            "started": None,
            "experiment": "e",
            "cell": "c",
            "verdict": "pass",
        },
    ]
    assert last_verdicts(rows, "s") == {("e", "c"): ("fail", "r2")}


def test_a_flip_that_repeats_stands(tmp_path: Path) -> None:
    night(tmp_path, FakeRunner())
    fake = FakeRunner({CELL: "fail"})
    result, said = night(tmp_path, fake)
    assert [(name, cells) for name, cells, _ in fake.calls] == [
        ("plain", ["01_version=3.9.2", "02_version=4.3.1"]),
        ("plain", ["01_version=3.9.2"]),  # the flipped cell alone, once more
        ("pinned-zk", ["01_version=3.9.2"]),
    ]
    assert {seed for *_, seed in fake.calls} == {9}
    (entry,) = confirmations(result)
    assert entry["status"] == "confirmed" and entry["previous_verdict"] == "pass"
    assert [r["verdict"] for r in entry["reruns"]] == ["fail"]
    rerun = result.folder / entry["reruns"][0]["run_dir"]
    assert rerun.parent == SuitePaths(result.folder).confirmations and rerun.is_dir()
    assert result.summary["verdict"] == "fail" and result.summary["flaky"] == []
    assert any(
        "confirm plain 01_version=3.9.2: pass → fail, re-run(s) fail: confirmed" in s for s in said
    )


def test_a_flip_that_does_not_repeat_is_flaky_and_fails_nothing(tmp_path: Path) -> None:
    night(tmp_path, FakeRunner())
    result, _ = night(tmp_path, FakeRunner({CELL: ["fail", "pass"]}))
    (entry,) = confirmations(result)
    assert entry["status"] == "flaky"
    summary = result.summary
    assert summary["verdict"] == "pass"  # the exit code's: 0
    assert summary["flaky"] == [{"experiment": "plain", "cell": "01_version=3.9.2"}]
    plain = summary["experiments"][0]
    assert plain["verdict"] == "pass"
    assert [c["verdict"] for c in plain["cells"]] == ["fail", "pass"]  # the cell verdict stays
    paths = SuitePaths(result.folder)
    root = ET.parse(paths.junit).getroot()
    assert (root.get("failures"), root.get("errors"), root.get("skipped")) == ("0", "0", "1")
    (case,) = [c for c in root.iter("testcase") if c.find("skipped") is not None]
    skipped = case.find("skipped")
    assert case.get("name") == "01_version=3.9.2" and case.find("failure") is None
    assert skipped is not None and skipped.get("message", "").startswith("flaky: pass → fail")
    md = paths.summary_md.read_text()
    assert "| plain | pass | 2 | 1 | 0 | 0 | 1 |" in md
    assert "**flaky**" in md and "re-run(s) with the same seed: pass" in md
    history = pq.read_table(tmp_path / "results" / "history.parquet").to_pylist()
    latest = [r for r in history if r["suite_run"] == summary["run_id"]]
    assert {(r["experiment"], r["cell"]): r["confirmation"] for r in latest} == {
        ("plain", "01_version=3.9.2"): "flaky",
        ("plain", "02_version=4.3.1"): None,
        ("pinned-zk", "01_version=3.9.2"): None,
    }
    assert {r["verdict"] for r in latest if r["confirmation"] == "flaky"} == {"fail"}


def test_a_flip_to_pass_that_fails_again_is_flaky(tmp_path: Path) -> None:
    night(tmp_path, FakeRunner({CELL: "fail"}), confirm=0)
    result, _ = night(tmp_path, FakeRunner({CELL: ["pass", "fail"]}))
    (entry,) = confirmations(result)
    assert (entry["previous_verdict"], entry["verdict"], entry["status"]) == (
        "fail",
        "pass",
        "flaky",
    )
    assert result.summary["verdict"] == "pass"


def test_more_reruns_stop_at_the_first_contradiction(tmp_path: Path) -> None:
    night(tmp_path, FakeRunner())
    fake = FakeRunner({CELL: ["fail", "unknown", "pass", "fail"]})
    result, _ = night(tmp_path, fake, confirm=3)
    (entry,) = confirmations(result)
    assert [r["verdict"] for r in entry["reruns"]] == ["unknown", "pass"]
    assert entry["status"] == "flaky" and fake.runs[CELL] == 3


def test_no_previous_run_no_confirmation(tmp_path: Path) -> None:
    fake = FakeRunner({CELL: "fail"})
    result, _ = night(tmp_path, fake)
    assert [name for name, _, _ in fake.calls] == ["plain", "pinned-zk"]
    assert confirmations(result) == [] and result.summary["verdict"] == "fail"
    assert not SuitePaths(result.folder).confirmations.exists()


def test_confirm_flips_0_never_runs_again(tmp_path: Path) -> None:
    night(tmp_path, FakeRunner())
    fake = FakeRunner({CELL: ["fail", "pass"]})
    result, _ = night(tmp_path, fake, confirm=0)
    assert [name for name, _, _ in fake.calls] == ["plain", "pinned-zk"]
    assert result.summary["verdict"] == "fail" and result.summary["confirm_flips"] == 0
    assert "confirmations" not in result.summary["experiments"][0]


def test_a_rerun_that_breaks_leaves_the_flip_standing(tmp_path: Path) -> None:
    night(tmp_path, FakeRunner())

    class Breaks(FakeRunner):
        def __call__(self, plan: Any, out: Path, cell_done: Any) -> tuple[Path, dict[str, Any]]:
            if out.name == "confirm":
                raise RuntimeError("docker went away")
            return super().__call__(plan, out, cell_done)

    result, _ = night(tmp_path, Breaks({CELL: "fail"}))
    (entry,) = confirmations(result)
    assert entry["status"] == "unconfirmed" and result.summary["verdict"] == "fail"
    assert entry["reruns"] == [
        {
            "run_dir": None,
            "run_id": None,
            "verdict": "unknown",
            "error": "RuntimeError: docker went away",
        }
    ]


def test_the_summary_json_names_the_reruns(tmp_path: Path) -> None:
    night(tmp_path, FakeRunner())
    result, _ = night(tmp_path, FakeRunner({CELL: ["fail", "pass"]}))
    saved = json.loads(SuitePaths(result.folder).summary.read_text())
    assert saved["confirm_flips"] == 1 and saved["flaky"] == result.summary["flaky"]
    entry = saved["experiments"][0]["confirmations"][0]
    assert set(entry) == {"cell", "verdict", "previous_verdict", "previous_run", "reruns", "status"}
    assert entry["reruns"][0]["run_dir"].startswith("confirm/")
