"""voters_unexpected: is a dynamic KRaft quorum (KIP-853) the one its operations meant?

The initial voters are the `cluster.start` event's (`quorum.voters`); each completed
add-controller adds its controller, each completed remove-controller takes its own away (their
`fault.heal` events). The final voter set is the one Kafka's `describe --status` listed once
the faults were healed (the `quorum.status` event of the recovery phase). The figure counts the
voters in one set and not the other: 0 when the quorum is the expected one. A cell without a
dynamic quorum has neither figure; one whose final status was not read leaves it undecided.
"""

from __future__ import annotations

from harness.results import events as ev
from harness.results.events import Event
from harness.results.metrics import Figures, QuorumFigures
from spark_jobs import history_facts as hf
from spark_jobs.check import Check
from spark_jobs.context import CellContext

# The operations that change the voter set: (kind, the outcome flag saying it did).
CHANGES = {"add-controller": "joined", "remove-controller": "removed"}


def initial_voters(history: list[Event]) -> list[int] | None:
    """The voters a dynamic quorum was formatted with (None: no dynamic quorum)."""
    starts = [e for e in hf.events(history, ev.CLUSTER_START) if isinstance(e.get("quorum"), dict)]
    if not starts:
        return None
    return sorted(int(v) for v in starts[-1]["quorum"].get("voters") or [])


def expected_voters(initial: list[int], history: list[Event]) -> list[int]:
    """The initial voters with every completed voter change applied, in history order."""
    voters = set(initial)
    for e in hf.events(history, ev.FAULT_HEAL):
        flag = CHANGES.get(str(e.get("fault")))
        if flag is None or e.get(flag) is not True or not isinstance(e.get("controller"), int):
            continue
        if e["fault"] == "add-controller":
            voters.add(e["controller"])
        else:
            voters.discard(e["controller"])
    return sorted(voters)


def run(ctx: CellContext) -> Figures:
    history = ctx.data.history
    initial = initial_voters(history)
    if initial is None:
        return {}
    expected = expected_voters(initial, history)
    statuses = hf.events(history, ev.QUORUM_STATUS)
    last = statuses[-1] if statuses else None
    final = last.get("voters") if last is not None else None
    leader = last.get("leader") if last is not None else None
    quorum: QuorumFigures = {
        "initial": initial,
        "expected": expected,
        "final": sorted(int(v) for v in final) if isinstance(final, list) else None,
        "leader": leader if isinstance(leader, int) else None,
    }
    if quorum["final"] is None:
        why = (
            f"the final quorum status was not read: {last.get('error')}"
            if last is not None
            else "no quorum.status event in history.jsonl (the cell ended before its recovery)"
        )
        return {
            "quorum": quorum,
            "voters_unexpected": None,
            "undecided": {"voters_unexpected": why},
        }
    unexpected = set(quorum["final"]) ^ set(expected)
    return {"quorum": quorum, "voters_unexpected": len(unexpected)}


CHECK = Check("quorum", needs=(), decides=("voters_unexpected", "quorum"), run=run)
