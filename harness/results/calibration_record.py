"""A spec's calibration record: the figures of its `harness calibrate` runs, kept in the
repository beside the experiments (experiments/calibrations/<spec name>.json) so that the
docs and the incident catalogue cite measurements, not prose.

calibration.json lives in a result folder, which nobody commits; the record keeps of each
calibration only what a bound needs to be judged again later (each bound's figures, verdicts
and which runs were overloaded or undecided), so a bound changed after the runs gets its
margin from the same figures. Keys are only ever appended (docs/results.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

RECORD_FOLDER = "calibrations"  # beside the spec folders: experiments/calibrations/
BOUND_KEYS = ("metric", "bound", "threshold", "direction", "kind", "figures", "verdicts")


def _loadavg_max(run_folders: Sequence[Mapping[str, Any]]) -> float | None:
    loads = [
        float(r[key][0])
        for r in run_folders
        for key in ("loadavg_start", "loadavg_end")
        if isinstance(r.get(key), list) and r[key]
    ]
    # runs judged with `calibrate --from`: the cells' machine samplers' highest load1
    loads += [
        float(r["load1_max"]) for r in run_folders if isinstance(r.get("load1_max"), (int, float))
    ]
    return max(loads, default=None)


def record_entry(calibration: Mapping[str, Any]) -> dict[str, Any]:
    """One calibration.json as the record keeps it."""
    cells = []
    for cell in calibration.get("cells", []):
        bounds = []
        for b in cell.get("bounds", []):
            entry = {k: b.get(k) for k in BOUND_KEYS}
            entry["overloaded_runs"] = [o["run"] for o in b.get("overloaded", [])]
            entry["undecided_runs"] = [u["run"] for u in b.get("undecided", [])]
            if "counted" in b:  # broker_errors' templates: re-judged under a changed allow-list
                entry["counted"] = b["counted"]
            bounds.append(entry)
        entry_cell: dict[str, Any] = {"cell": cell["cell"], "verdicts": cell.get("verdicts", [])}
        for key in ("unknown_why", "broker_logs_allow"):
            if key in cell:
                entry_cell[key] = cell[key]
        cells.append({**entry_cell, "bounds": bounds})
    runs = calibration.get("run_folders", [])
    return {
        "started": calibration.get("started"),
        "run_ids": [Path(r["folder"]).name if r.get("folder") else None for r in runs],
        "seed": calibration.get("seed"),
        "runs": calibration.get("runs"),
        "load": calibration.get("load", 0),
        "cells_filter": calibration.get("cells_filter"),
        "duration_s": calibration.get("duration_s"),
        "harness": calibration.get("harness"),
        "loadavg_max": _loadavg_max(runs),
        "status": calibration.get("status"),
        "cells": cells,
    }


def merged(record: Mapping[str, Any] | None, calibration: Mapping[str, Any]) -> dict[str, Any]:
    """The record with `calibration` added (replacing one with the same start and run folders:
    recording the same calibration twice changes nothing), oldest first."""
    entry = record_entry(calibration)
    key = (entry["started"], entry["run_ids"])
    old = [
        c
        for c in (record or {}).get("calibrations", [])
        if (c.get("started"), c.get("run_ids")) != key
    ]
    return {
        "spec": calibration.get("spec") or (record or {}).get("spec"),
        "calibrations": sorted([*old, entry], key=lambda c: str(c.get("started"))),
    }


def read_record(path: Path) -> dict[str, Any] | None:
    """The record at `path`, None when there is none; ValueError naming a damaged one."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("calibrations"), list):
        raise ValueError(f"{path}: not a calibration record (no `calibrations` list)")
    return data


def write_record(path: Path, record: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def record_path(spec_file: Path, spec_name: str) -> Path:
    """Where a spec's record lives: experiments/calibrations/<name>.json for a spec anywhere
    under experiments/ (the folder found by walking up), else beside the spec."""
    for parent in spec_file.resolve().parents:
        if parent.name == "experiments":
            return parent / RECORD_FOLDER / f"{spec_name}.json"
    return spec_file.resolve().parent / RECORD_FOLDER / f"{spec_name}.json"


def headline(record: Mapping[str, Any]) -> str:
    """One line for the catalogue: when, how many runs, quiet and beside burners."""
    if not record["calibrations"]:
        return "calibrated: no calibration recorded yet"
    quiet = [c for c in record["calibrations"] if not c.get("load")]
    loaded = [c for c in record["calibrations"] if c.get("load")]
    parts = []
    if quiet:
        load = max(
            (c["loadavg_max"] for c in quiet if c.get("loadavg_max") is not None), default=None
        )
        parts.append(
            f"{sum(int(c.get('runs') or 0) for c in quiet)} quiet run(s)"
            + (f" (load ≤ {load:g})" if load is not None else "")
        )
    for burners in sorted({int(c["load"]) for c in loaded}):
        n = sum(int(c.get("runs") or 0) for c in loaded if int(c["load"]) == burners)
        parts.append(f"{n} beside {burners} CPU burner(s)")
    dates = sorted(str(c.get("started", ""))[:10] for c in record["calibrations"])
    when = dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"
    return f"calibrated {when}: {', '.join(parts)}"
