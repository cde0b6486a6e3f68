"""Targets by role as ordinary fault entries: what `explore:`'s roles mean on a given cell.

A role becomes one or more entries of a spec's `faults:` (without at_s and duration_s): one
broker (`broker:<id>`), the leader of a partition (`leader-of:<topic>/<p>`), the controller,
a minority or a majority of the brokers (one entry per broker, at the same time; a split
puts its target on that side instead). So a trial is an ordinary cell, and the shrinker's
"fewer faults" turns a majority into a minority by itself.
"""

from __future__ import annotations

import random
from typing import Any

from harness.faults.cell_view import CellView
from harness.faults.drawing import OWN_TARGET
from harness.faults.registry import SPEC_KINDS
from harness.spec.explore import Role

Entry = dict[str, Any]  # a fault as a spec's `faults:` holds it
CONTROLLER, LEADER_OF = "controller", "leader-of:"  # targets resolved when the fault fires
ALL = "all"  # every Kafka node at one instant (power-loss)


def minority_size(brokers: int) -> int:
    """Brokers in a minority: (n - 1) // 2 (none with fewer than three brokers)."""
    return (brokers - 1) // 2


def majority_size(brokers: int) -> int:
    return brokers // 2 + 1


def role_entries(kind: str, role: Role, cell: CellView, rng: random.Random | None) -> list[Entry]:
    """The entries that play `kind` on `role` in this cell, with the options its module draws
    (harness.faults.drawing); brokers and partitions drawn from `rng` (None: the first ones,
    for a probe). Empty when the kind is not drawn on that role, or the role has no node here
    (a minority of fewer than three brokers)."""
    spec_kind = SPEC_KINDS[kind]
    if spec_kind.drawing is None or role not in spec_kind.drawing.roles:
        return []
    targets = _targets(kind, role, cell, rng)
    return [{**t, **spec_kind.drawn_options(rng, cell)} for t in targets]


def _targets(kind: str, role: Role, cell: CellView, rng: random.Random | None) -> list[Entry]:
    brokers = sorted(cell.brokers)

    def pick(n: int) -> list[int]:
        return sorted(rng.sample(brokers, n) if rng is not None else brokers[:n])

    if role in OWN_TARGET:
        return [{"kind": kind, "target": SPEC_KINDS[kind].drawn_target(rng, cell)}]
    if not brokers:
        return []
    if role == "all":
        target = ALL
    elif role == "controller":
        target = "controller"
    elif role == "leader":
        partition = rng.randrange(cell.partitions) if rng is not None else 0
        target = f"leader-of:{cell.topic}/{partition}"
    elif role == "one" or kind == "split":
        target = f"broker:{pick(1)[0]}"
    else:
        size = minority_size(len(brokers)) if role == "minority" else majority_size(len(brokers))
        return [{"kind": kind, "target": f"broker:{b}"} for b in pick(size)] if size else []
    if kind == "split":
        if role == "minority" and not minority_size(len(brokers)):
            return []
        return [
            {
                "kind": kind,
                "target": target,
                "side": "majority" if role == "majority" else "minority",
            }
        ]
    return [{"kind": kind, "target": target}]


def role_of(entry: Entry) -> Role:
    """The role one entry names by itself (a minority of separate entries reads as `one`)."""
    target = str(entry.get("target", ""))
    if entry.get("side") == "majority":
        return "majority"
    if target == ALL:
        return "all"
    kind = SPEC_KINDS.get(str(entry.get("kind", "")))
    if target == "producer" or target.startswith("consumer:"):
        return "client"
    if kind is not None and kind.target_style in ("topic", "spare", "none"):
        return "cluster"
    if target == CONTROLLER:
        return "controller"
    if target.startswith(LEADER_OF):
        return "leader"
    return "one"


def simpler_targets(entry: Entry, cell: CellView) -> list[Entry]:
    """The same fault on simpler targets, simplest first: a split's majority side becomes its
    minority; a symbolic target (leader, controller) a fixed broker."""
    out: list[Entry] = []
    if entry.get("side") == "majority":
        out.append({**entry, "side": "minority"})
    target = str(entry.get("target", ""))
    if (target == "controller" or target.startswith("leader-of:")) and cell.brokers:
        out.append({**entry, "target": f"broker:{min(cell.brokers)}"})
    return out
