"""The index page's explore section (harness.suite.index_explore) from hand-built explore
folders beside a suite folder: the newest run of each spec, its violations with the link to
its minimal-repro.yaml, its coverage and states; a damaged summary is noted, not fatal."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote

from harness.explore.summary import (
    CoverageRow,
    CurvePoint,
    ExploreSummary,
    ShrunkRecord,
    TrialRecord,
    ViolationRecord,
    write_summary,
)
from harness.report.index_page import render_index
from harness.suite.index import build_index
from harness.suite.index_inputs import Damage
from tests.unit.index_folders import nightly_results

KILL = {"at_s": 9, "kind": "kill", "target": "leader-of:chaos/0", "duration_s": 10}
PAUSE = {"at_s": 15, "kind": "pause", "target": "broker:2", "duration_s": 5}


def explore_folder(results: Path, name: str, started: str, violated: bool) -> Path:
    folder = results / name
    folder.mkdir()
    summary = ExploreSummary(
        spec="explore-acks1",
        file="tests/experiments/explore-acks1.yaml",
        seed=3,
        started=started,
        k=3,
        need=2,
        budget={"cells": 8, "minutes": None, "cells_run": 8, "elapsed_s": 1500.0},
        trials=[
            TrialRecord(trial=0, cell="default", faults=[PAUSE], verdict="pass"),
            TrialRecord(
                trial=1,
                cell="default",
                faults=[KILL, PAUSE],
                verdict="fail" if violated else "pass",
                violated=["lost"] if violated else [],
                reached=["isr_at_min"],
            ),
        ],
        coverage=[
            CoverageRow(kind="kill", role="leader", phase="early", trials=1),
            CoverageRow(kind="pause", role="one", phase="middle", trials=2),
        ],
        reached={"isr_at_min": 1, "leaderless": None},
    )
    if violated:
        repro = folder / "violations" / "trial-001-lost" / "minimal-repro.yaml"
        repro.parent.mkdir(parents=True)
        repro.write_text("name: explore-acks1-repro\n", encoding="utf-8")
        shrunk = ShrunkRecord(
            faults=[KILL],
            reproduced="3/3",
            # as explore wrote it, relative to where it ran
            file=f"results/{name}/violations/trial-001-lost/minimal-repro.yaml",
            stopped="fixed point",
            log=f"results/{name}/violations/trial-001-lost/shrink-log.json",
        )
        summary.violations.append(
            ViolationRecord(
                property="lost", trial=1, cell="default", original=[KILL, PAUSE], shrunk=shrunk
            )
        )
    write_summary(folder, summary)
    return folder


def test_the_newest_explore_run_of_a_spec_is_on_the_page(tmp_path: Path) -> None:
    nightly_results(tmp_path)
    explore_folder(tmp_path, "20261110T010000Z-explore-explore-acks1", "2026-11-10T01:00", False)
    explore_folder(tmp_path, "20261111T010000Z-explore-explore-acks1", "2026-11-11T01:00", True)
    page = build_index(tmp_path)
    (x,) = page.explorations
    assert (x.spec, x.run, x.verdict, x.trials) == (
        "explore-acks1",
        "20261111T010000Z-explore-explore-acks1",
        "fail",
        2,
    )
    assert x.spent == "8 cell(s) run, 25 min"
    ((prop, said, href),) = x.violations
    assert prop == "lost" and said == "trial 1 (default), shrunk 2 -> 1 fault(s), reproduced 3/3"
    assert href is not None and (tmp_path / unquote(href)).is_file()
    assert (tmp_path / unquote(x.summary_href)).is_file()
    assert x.phases == ("early", "middle", "late")
    assert x.coverage == [("kill", "leader", [1, 0, 0]), ("pause", "one", [0, 2, 0])]
    states = dict(x.states)
    assert states["isr_at_min"] == 1 and states["leaderless"] is None
    assert "producer_fenced" in states  # every state is listed, never reached ones too
    html = render_index(page)
    assert 'id="explorations"' in html and 'data-spec="explore-acks1"' in html
    assert "minimal-repro.yaml</a>" in html and ">never<" in html


def test_no_explore_run_no_section_and_a_damaged_summary_is_noted(tmp_path: Path) -> None:
    nightly_results(tmp_path)
    page = build_index(tmp_path)
    assert page.explorations == [] and 'id="explorations"' not in render_index(page)
    broken = tmp_path / "20261111T020000Z-explore-broken"
    broken.mkdir()
    doc = {"trials": [], "coverage": [], "violations": [], "need": 2, "k": "three"}
    (broken / "summary.json").write_text(json.dumps(doc), encoding="utf-8")
    damaged: list[Damage] = []
    page = build_index(tmp_path, damaged=damaged)
    assert page.explorations == []
    assert any("20261111T020000Z-explore-broken/summary.json left out" in n for n in page.notes)
    assert len(damaged) == 1 and not damaged[0].infra


def test_the_coverage_curve_and_an_unconfirmed_violation_are_on_the_page(tmp_path: Path) -> None:
    nightly_results(tmp_path)
    folder = explore_folder(tmp_path, "20261112T010000Z-explore-explore-acks1", "2026-11-12", False)
    path = folder / "summary.json"
    doc = json.loads(path.read_text())
    doc.pop("verdict")
    summary = ExploreSummary.model_validate(doc)
    summary.curve = [
        CurvePoint(trial=0, cells_spent=1, states=0),
        CurvePoint(trial=1, cells_spent=2, states=1),
    ]
    summary.unconfirmed.append(
        ViolationRecord(property="lost", trial=1, cell="default", original=[KILL, PAUSE])
    )
    write_summary(folder, summary)
    (x,) = build_index(tmp_path).explorations
    assert x.verdict == "unknown" and x.curve == [0, 1]  # unconfirmed: not a fail
    assert x.violations == [] and x.unconfirmed == [
        ("lost", "trial 1 (default), reproduced - (not shrunk)")
    ]
    assert x.curve_points() == "0.0,48.0 240.0,0.0"
    html = render_index(build_index(tmp_path))
    assert 'class="explore-curve"' in html and "lost</strong> unconfirmed" in html
