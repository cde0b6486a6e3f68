"""`minimal-repro.yaml`: a shrunk violation as a complete experiment file.

The cell's spec (a matrix cell's values written out, no `matrix:`, no `explore:`) with the
shrunk `faults:`, the trial's seed, the violated expectation alone as its `expect:` (running
the file fails while the violation reproduces) and an `incident:` section as the incident
library writes it (claim, measured, safe: harness.spec.models.IncidentSpec) with the figures
of its reproductions. Keys at their defaults are left out, except the cluster's mode, version
and size: a default that changes later must not change what the file reproduces. The file
is loaded back with the project's spec loader before it is kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.explore.oracle import Repeats
from harness.spec import Spec, load_spec
from harness.spec.explore_roles import Entry

REPRO = "minimal-repro.yaml"
_ORDER = ("name", "description", "seed", "incident", "cluster", "topic", "producer")
_LATER = ("faults", "recovery", "expect")


@dataclass(frozen=True)
class Found:
    """A violation and its shrink, as the repro file tells it."""

    prop: str  # the `expect:` key violated
    seed: int  # the trial's run seed
    explore_seed: int
    trial: int
    cell: str  # the matrix cell explored
    original: list[Entry]
    faults: list[Entry]  # shrunk
    reproductions: Repeats  # the shrunk schedule's own k runs
    date: str  # YYYY-MM-DD of the shrink


def repro_data(spec: Spec, found: Found) -> dict[str, Any]:
    """The experiment file's data, in the order a person writes a spec: keys at their
    defaults left out when the result parses to the same spec as every key spelled out."""
    short = _data(spec, found, spec.model_dump(mode="json", exclude_defaults=True))
    full = _data(spec, found, spec.model_dump(mode="json", exclude_none=True))
    same = Spec.model_validate(short).model_dump() == Spec.model_validate(full).model_dump()
    return short if same else full


def _data(spec: Spec, found: Found, dumped: dict[str, Any]) -> dict[str, Any]:
    full = spec.model_dump(mode="json")
    for name in ("consumer", "pipeline"):  # a kind is the model's tag: always written
        if isinstance(dumped.get(name), dict):
            dumped[name] = {"kind": full[name]["kind"], **dumped[name]}
    if isinstance(dumped.get("consumers"), list):
        dumped["consumers"] = [
            {"kind": whole["kind"], **part}
            for part, whole in zip(dumped["consumers"], full["consumers"], strict=True)
        ]
    for key in ("matrix", "explore", "faults", "expect", "incident", "seed", "description"):
        dumped.pop(key, None)
    cluster = {k: full["cluster"][k] for k in ("mode", "version", "brokers")}
    dumped["cluster"] = {**cluster, **dumped.get("cluster", {})}
    bound = full["expect"][found.prop]
    dumped.update(
        name=f"{spec.name}-repro",
        description=_description(spec, found),
        seed=found.seed,
        incident={"claim": _claim(spec, found, bound), "measured": _measured(spec, found)},
        faults=found.faults,
        expect={found.prop: bound},
    )
    first = [k for k in _ORDER if k in dumped]
    later = [k for k in _LATER if k in dumped]
    rest = [k for k in dumped if k not in first and k not in later]
    return {k: dumped[k] for k in (*first, *rest, *later)}


def write_repro(folder: Path, spec: Spec, found: Found) -> Path:
    """Write `folder/minimal-repro.yaml` and load it back (SpecError if it does not load)."""
    path = folder / REPRO
    header = (
        f"# {spec.name}: {found.prop} violated; found by `harness explore` (seed "
        f"{found.explore_seed}, trial {found.trial}), shrunk from {len(found.original)} to "
        f"{len(found.faults)} fault(s), reproduced {found.reproductions.reproduced}\n"
    )
    text = yaml.safe_dump(repro_data(spec, found), sort_keys=False, allow_unicode=True, width=100)
    path.write_text(header + text, encoding="utf-8")
    load_spec(path)
    return path


def _description(spec: Spec, found: Found) -> str:
    said = spec.description.strip()
    return (
        f"Found by harness explore on {spec.name} (cell {found.cell}, explore seed "
        f"{found.explore_seed}, trial {found.trial}): a schedule of {len(found.original)} "
        f"fault(s) violated {found.prop}; shrunk to the {len(found.faults)} below."
        + (f" The explored spec: {said}" if said else "")
    )


def _claim(spec: Spec, found: Found, bound: Any) -> str:
    return f'"With {spec.name}\'s settings, {found.prop} {bound} holds whatever fails."'


def _measured(spec: Spec, found: Found) -> str:
    c, runs = spec.cluster, found.reproductions
    figures = " / ".join(r.detail or "undecided" for r in runs.runs if r.violated)
    return (
        f"{'KRaft' if c.mode == 'kraft' else 'ZooKeeper'} {c.version}, "
        f"{c.brokers} brokers, seed {found.seed} ({found.date}): the shrunk schedule violated "
        f"{found.prop} in {runs.reproduced} runs ({figures}). Real clusters are not "
        f"deterministic: explore kept each smaller schedule only when it violated {found.prop} "
        f"in at least {runs.need} of its runs."
    )
