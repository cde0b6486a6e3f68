"""Split a suite across machines (`run SUITE --shard K/N`) and put the parts back together
(`merge-shards`).

The nightly suite plans about 3 h on two cores; the workflow runs it as N
shards on N runners side by side. Shards are whole experiments (one run folder each, as in an
unsharded run), assigned by planned time, longest first, each to the shard with the least
planned so far (ties: the lower shard). The assignment is a function of the plan alone — the
suite file, the experiment files, `--cells` — so every shard computes the same one without
talking to the others. Experiments with no cell to run belong to shard 1 (which lists them).

A shard writes an ordinary suite folder named `…-shard-KofN` whose summary has
`shard: {index, count}`; it appends no history (the merged run does) and the index page skips
it. Its `suite.yaml` lists every experiment of the plan with its shard, so the merge knows what
a shard that never reported was meant to run: those cells are `unknown`, never missing.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.common.agreement import agreed
from harness.errors import ConfigError
from harness.results.layout import SuitePaths, inside, require_regular
from harness.suite.compare import summary_problems

# More shards than this is a mistake or a hostile file: the merge allocates per shard.
MAX_SHARDS = 1000
_SPELLING = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        m = _SPELLING.match(text)
        if m is None:
            raise ConfigError(f"--shard {text!r}: expected K/N, e.g. 2/4")
        index, count = int(m.group(1)), int(m.group(2))
        if count < 1 or not 1 <= index <= count:
            raise ConfigError(f"--shard {text!r}: K must be 1..N and N at least 1")
        if count > MAX_SHARDS:
            raise ConfigError(f"--shard {text!r}: at most {MAX_SHARDS} shards")
        return cls(index, count)

    @property
    def suffix(self) -> str:
        return f"shard-{self.index}of{self.count}"

    def as_json(self) -> dict[str, int]:
        return {"index": self.index, "count": self.count}

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def assign_shards(planned: list[tuple[str, float]], count: int) -> list[int]:
    """Each (name, planned seconds) item's shard, 1..count: longest first onto the least loaded
    shard. Deterministic: ties in time are broken by the item's position, in load by the lower
    shard. Items planned at 0 s (nothing to run) go to shard 1."""
    shards = [0] * len(planned)
    load = [0.0] * count
    order = sorted(range(len(planned)), key=lambda i: (-planned[i][1], i))
    for i in order:
        if planned[i][1] <= 0:
            shards[i] = 1
            continue
        k = min(range(count), key=lambda s: (load[s], s))
        load[k] += planned[i][1]
        shards[i] = k + 1
    return shards


# ---- merge ------------------------------------------------------------------------------


@dataclass
class ShardFolder:
    folder: Path
    planned: dict[str, Any]  # its suite.yaml
    summary: dict[str, Any] | None  # its summary.json; None: the shard never finished
    index: int
    count: int


def _number(value: Any, where: str, low: int, high: int) -> int:
    """An integer from a shard's file, low..high, or ConfigError naming where it was read."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(f"{where}: expected a whole number {low}..{high}, found {value!r}")
    return value


# The fields the merge reads from a shard's plan and summary, and the JSON types each may
# have (null always allowed): a shard file of another shape is a clear error, not a crash.
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "suite": (str,),
    "file": (str,),
    "experiment": (str,),
    "run_id": (str,),
    "started": (str,),
    "harness": (str,),
    "error": (str,),
    "left_out": (str, list),  # a plan experiment's reason; the summary's list
    "seed": (int,),
    "shard": (int, dict),
    "duration_s": (int, float),
    "planned_s": (int, float),
    "axes": (dict,),
    "added": (dict,),
    "kept": (dict,),
    "replaced": (dict,),
    "impossible": (list,),
    "cells": (list,),
    "planned_by_cell": (dict,),
    "experiments": (list,),
    "confirmations": (list,),
}


# Lists whose entries the merge and the summary read as objects (`.get`).
_LISTS_OF_OBJECTS = frozenset({"experiments", "impossible", "confirmations"})
# ... and the fields of those entries the summary reads, with the types each may have.
_ENTRY_TYPES: dict[str, dict[str, tuple[type, ...]]] = {
    "impossible": {"params": (dict,), "reason": (str,)},
}


def _shape_problems(data: dict[str, Any], where: str) -> list[str]:
    """Fields of `data` (and of each of its `experiments`) whose type the merge cannot use."""
    problems = []
    listed = data.get("experiments")
    items = [(where, data)] + [
        (f"{where}experiments[{i}].", e)
        for i, e in enumerate(listed if isinstance(listed, list) else [])
        if isinstance(e, dict)
    ]
    for prefix, item in items:
        for key, types in _FIELD_TYPES.items():
            value = item.get(key)
            bad_number = isinstance(value, float) and not math.isfinite(value)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, types) or bad_number
            ):
                wanted = " or ".join(t.__name__ for t in types)
                problems.append(f"{prefix}{key}: expected {wanted} or null, found {value!r:.60}")
            elif key in _LISTS_OF_OBJECTS and isinstance(value, list):
                problems += [
                    f"{prefix}{key}[{i}]: expected an object, found {entry!r:.60}"
                    for i, entry in enumerate(value)
                    if not isinstance(entry, dict)
                ]
                problems += [
                    f"{prefix}{key}[{i}].{field}: expected "
                    f"{' or '.join(t.__name__ for t in types)} or null, found {entry[field]!r:.60}"
                    for i, entry in enumerate(value)
                    if isinstance(entry, dict)
                    for field, types in _ENTRY_TYPES.get(key, {}).items()
                    if entry.get(field) is not None and not isinstance(entry[field], types)
                ]
    return problems


def _require_shape(path: Path, data: dict[str, Any], summary: bool) -> None:
    problems = _shape_problems(data, "") + (summary_problems(data) if summary else [])
    if problems:
        shown = "; ".join(problems[:5]) + (
            f"; ... {len(problems) - 5} more" if len(problems) > 5 else ""
        )
        raise ConfigError(f"{path}: not a shard file as the harness writes it: {shown}")


def _read_shard(folder: Path) -> ShardFolder:
    """A shard folder's plan and summary; every count and path in them checked before the
    merge uses one: counts bounded, paths inside the folder (resolved, symlinks too)."""
    paths = SuitePaths(folder)
    if not paths.suite.is_file():
        raise ConfigError(f"{folder}: not a suite folder (no {paths.suite.name})")
    inside(folder, Path(paths.suite.name))
    require_regular(paths.suite)
    try:
        planned = yaml.safe_load(paths.suite.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{paths.suite}: cannot be read: {exc}") from None
    shard = planned.get("shard") if isinstance(planned, dict) else None
    if not isinstance(planned, dict) or not isinstance(shard, dict):
        raise ConfigError(f"{folder}: not a shard of a suite (its suite.yaml has no `shard:`)")
    count = _number(shard.get("count"), f"{paths.suite}: shard.count", 1, MAX_SHARDS)
    index = _number(shard.get("index"), f"{paths.suite}: shard.index", 1, count)
    experiments = planned.get("experiments") or []
    if not isinstance(experiments, list) or not all(isinstance(e, dict) for e in experiments):
        raise ConfigError(f"{paths.suite}: `experiments` must be a list of mappings")
    _require_shape(paths.suite, planned, summary=False)
    for i, e in enumerate(experiments):
        _number(e.get("shard") or 1, f"{paths.suite}: experiments[{i}].shard", 1, count)
        if not isinstance(e.get("cells") or [], list):
            raise ConfigError(f"{paths.suite}: experiments[{i}].cells must be a list")
    summary: dict[str, Any] | None = None
    if paths.summary.is_file():
        inside(folder, Path(paths.summary.name))
        require_regular(paths.summary)
        try:
            loaded = json.loads(paths.summary.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            loaded = None
        summary = loaded if isinstance(loaded, dict) else None
    if summary is not None:
        _require_shape(paths.summary, summary, summary=True)
        _check_records(folder, paths.summary, summary)
    return ShardFolder(folder, planned, summary, index, count)


def _check_records(folder: Path, path: Path, summary: dict[str, Any]) -> None:
    """Each experiment record of a shard's summary is a mapping, and its `run_dir` a folder
    inside the shard folder holding no symlink that leads out of it: the merge copies it."""
    records = summary.get("experiments") or []
    if not isinstance(records, list) or not all(isinstance(e, dict) for e in records):
        raise ConfigError(f"{path}: `experiments` must be a list of mappings")
    for i, e in enumerate(records):
        if not isinstance(e.get("cells") or [], list):
            raise ConfigError(f"{path}: experiments[{i}].cells must be a list")
        for key, run_dir in _run_dirs(e, f"{path}: experiments[{i}]"):
            _check_run_dir(folder, f"{path}: experiments[{i}].{key} {run_dir!r}", run_dir)


def _run_dirs(record: dict[str, Any], where: str) -> list[tuple[str, Any]]:
    """The run folders a record names: its run's, then its confirmation re-runs'
    (harness.suite.confirm), each with the key it is read from."""
    found = [("run_dir", record.get("run_dir"))] if record.get("run_dir") else []
    for j, c in enumerate(record.get("confirmations") or []):
        reruns = c.get("reruns") if isinstance(c, dict) else None
        if not isinstance(reruns, list) or not all(isinstance(r, dict) for r in reruns):
            raise ConfigError(f"{where}.confirmations[{j}]: expected a mapping with `reruns`")
        found += [
            (f"confirmations[{j}].reruns[{k}].run_dir", r.get("run_dir"))
            for k, r in enumerate(reruns)
            if r.get("run_dir")
        ]
    return found


def _check_run_dir(folder: Path, where: str, run_dir: Any) -> None:
    """A folder inside the shard folder holding no symlink that leads out of it."""
    if not isinstance(run_dir, str) or Path(run_dir).is_absolute():
        raise ConfigError(f"{where}: expected a path relative to {folder}")
    target = inside(folder, Path(run_dir))
    if target == folder.resolve():
        raise ConfigError(f"{where}: is the shard folder itself, not a run folder in it")
    for root, dirs, files in os.walk(target):
        for name in (*dirs, *files):
            link = Path(root) / name
            if link.is_symlink():
                inside(folder, link.relative_to(folder.resolve()))


def read_shards(folders: list[Path]) -> list[ShardFolder]:
    """The shard folders, checked to be parts of one planned run (same suite, seed, count)."""
    if not folders:
        raise ConfigError("no shard folder given")
    shards = [_read_shard(f) for f in folders]
    first = shards[0]
    for s in shards[1:]:
        for key in ("suite", "seed", "planned_s"):
            if s.planned.get(key) != first.planned.get(key):
                raise ConfigError(
                    f"{s.folder} and {first.folder} are not shards of one run: {key} "
                    f"{s.planned.get(key)!r} vs {first.planned.get(key)!r}"
                )
        if s.count != first.count:
            raise ConfigError(
                f"{s.folder} is shard {s.index}/{s.count}, {first.folder} {first.index}/{first.count}"
            )
    seen: dict[int, Path] = {}
    for s in shards:
        if s.index in seen:
            raise ConfigError(f"shard {s.index}/{s.count} given twice: {seen[s.index]}, {s.folder}")
        seen[s.index] = s.folder
    return sorted(shards, key=lambda s: s.index)


def unknown_cell(cell_id: str, detail: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A cell that did not run to the end of its checks: unknown, with the reason."""
    return {
        "cell": cell_id,
        "params": params or {},
        "verdict": "unknown",
        "counts": {},
        "checks": [{"name": "run", "verdict": "unknown", "detail": detail}],
        "duration_s": None,
    }


def _copy_run(src_suite: Path, run_dir: str, dest: SuitePaths, into: Path | None = None) -> str:
    """Copy one experiment's run folder into the merged suite folder (`into`: a folder of it
    other than experiments/); its new relative path."""
    into = dest.experiments if into is None else into
    src = src_suite / run_dir
    target = into / Path(run_dir).name
    n = 2
    while target.exists():
        target = into / f"{Path(run_dir).name}-{n}"
        n += 1
    shutil.copytree(src, target, symlinks=True)
    return target.relative_to(dest.root).as_posix()


def _copy_confirmations(src_suite: Path, record: dict[str, Any], dest: SuitePaths) -> None:
    """The record's confirmation re-runs copied into the merged folder's confirm/ (each run
    folder once; one missing from the shard's upload: its run_dir becomes null)."""
    copied: dict[str, str | None] = {}
    entries = [dict(c) for c in record.get("confirmations") or []]
    for c in entries:
        c["reruns"] = [dict(r) for r in c.get("reruns") or []]
        for r in c["reruns"]:
            old = r.get("run_dir")
            if not old:
                continue
            if old not in copied:
                found = (src_suite / old).is_dir()
                copied[old] = _copy_run(src_suite, old, dest, dest.confirmations) if found else None
            r["run_dir"] = copied[old]
    if entries:
        record["confirmations"] = entries


def merged_info(shards: list[ShardFolder], run_id: str, dest: SuitePaths) -> dict[str, Any]:
    """The merged run's summary input (`write_suite_summary`), run folders copied into `dest`.

    Experiments in the plan's order; one whose shard reported nothing, or whose record is
    missing from its shard's summary, is recorded with an error and its cells `unknown`.
    """
    plan = shards[0].planned
    count = shards[0].count
    by_index = {s.index: s for s in shards}
    records: dict[tuple[int, str], dict[str, Any]] = {}
    for s in shards:
        for e in (s.summary or {}).get("experiments") or []:
            records[(s.index, str(e.get("file")))] = e
    experiments: list[dict[str, Any]] = []
    left_out: list[dict[str, Any]] = []
    for e in plan.get("experiments") or []:
        k = int(e.get("shard") or 1)
        if not e.get("cells"):
            left_out.append(
                {
                    "experiment": e.get("experiment"),
                    "file": e.get("file"),
                    "reason": e.get("left_out", ""),
                    "impossible": e.get("impossible") or [],
                }
            )
            continue
        shard = by_index.get(k)
        record = records.get((k, str(e.get("file"))))
        if record is not None and shard is not None:
            record = dict(record, shard=k)
            if record.get("run_dir"):
                if (shard.folder / str(record["run_dir"])).is_dir():
                    record["run_dir"] = _copy_run(shard.folder, str(record["run_dir"]), dest)
                else:  # a partial upload: the verdicts stand, the reports are not here
                    record["error"] = (
                        f"its run folder {record['run_dir']} is missing from {shard.folder.name}"
                    )
                    record["run_dir"] = None
            _copy_confirmations(shard.folder, record, dest)
            experiments.append(record)
            continue
        if shard is None:
            why = (
                f"shard {k}/{count} was not given to the merge (it did not run or reported nothing)"
            )
        elif shard.summary is None:
            why = f"shard {k}/{count} ({shard.folder.name}) did not finish: it wrote no summary"
        else:
            why = f"shard {k}/{count} ({shard.folder.name}) has no record of this experiment"
        experiments.append(
            {
                "experiment": e.get("experiment"),
                "file": e.get("file"),
                "run_dir": None,
                "run_id": None,
                "seed": e.get("seed"),
                "started": None,
                "duration_s": None,
                "planned_s": None,
                "added": e.get("added") or {},
                "kept": e.get("kept") or {},
                "replaced": e.get("replaced") or {},
                "impossible": e.get("impossible") or [],
                "error": why,
                "shard": k,
                "cells": [unknown_cell(str(c), why) for c in e.get("cells") or []],
            }
        )
    busy = {int(e.get("shard") or 1) for e in plan.get("experiments") or [] if e.get("cells")}
    summaries = [s.summary for s in shards if s.summary is not None]
    starts = sorted(str(x["started"]) for x in summaries if x.get("started"))
    durations = [x["duration_s"] for x in summaries if isinstance(x.get("duration_s"), int | float)]
    return {
        "suite": plan.get("suite"),
        "run_id": run_id,
        "file": plan.get("file"),
        "seed": plan.get("seed"),
        "started": starts[0] if starts else None,
        # the shards ran side by side: the run took as long as its longest shard
        "duration_s": max(durations) if durations else None,
        # the code the shards ran, when they agree on it (null: they differ, or none says)
        "harness": agreed(x.get("harness") for x in summaries),
        "planned_s": plan.get("planned_s"),
        "axes": plan.get("axes") or {},
        "shards": [_shard_line(by_index.get(k), k, count, k in busy) for k in range(1, count + 1)],
        "experiments": experiments,
        "left_out": left_out,
    }


def _shard_line(shard: ShardFolder | None, index: int, count: int, busy: bool) -> dict[str, Any]:
    """`finished`: the shard wrote its summary; `empty`: no experiment fell to it (it runs
    nothing and writes no folder: more shards than experiments)."""
    if shard is None:
        return {
            "index": index,
            "count": count,
            "folder": None,
            "finished": not busy,
            **({} if busy else {"empty": True}),
        }
    summary = shard.summary or {}
    return {
        "index": index,
        "count": count,
        "folder": shard.folder.name,
        "finished": shard.summary is not None,
        "verdict": summary.get("verdict"),
        "started": summary.get("started"),
        "duration_s": summary.get("duration_s"),
        "planned_s": shard.planned.get("shard_planned_s"),
    }


__all__ = ["Shard", "ShardFolder", "assign_shards", "merged_info", "read_shards", "unknown_cell"]
