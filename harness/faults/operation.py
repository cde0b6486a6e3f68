"""An operation: something an operator does to the running cluster, once, for real.

inject() returns when the operation completed (bounded by `timeout_s`) or raises. The
history's `fault.inject` / `fault.heal` pair is its window on the timeline; the heal
carries the outcome (`completed`, `elapsed_s`, what moved), also when it failed, so a
window never stays open. Heal does not undo an operation (a decommissioned broker stays
gone, a grown topic stays grown).
"""

from __future__ import annotations

import time
from abc import ABC
from collections.abc import Mapping
from typing import Any

from harness.common.waiting import wait_until
from harness.faults.base import Fault
from harness.faults.control import Node, Operable
from harness.faults.kind import DEFAULT_OPERATION_TIMEOUT_S


class Operation(Fault, ABC):
    """Subclasses do the work in `_inject` and add what happened to `self.outcome`.

    `given`: the options the spec set (the history records them); `timeout_s`: the bound
    on waiting for completion (DEFAULT_OPERATION_TIMEOUT_S when the spec gave none).
    """

    def __init__(
        self, cluster: Operable, given: Mapping[str, Any], timeout_s: float | None = None
    ) -> None:
        super().__init__(cluster)
        self.ops = cluster
        self.given = dict(given)
        self.timeout_s = DEFAULT_OPERATION_TIMEOUT_S if timeout_s is None else timeout_s
        self.outcome: dict[str, Any] = {}

    def target_name(self) -> str:
        """What the operation acts on, as the timeline labels it."""
        return "cluster"

    def describe(self) -> dict[str, Any]:
        return {
            "fault": self.kind,
            "target": self.target_name(),
            "operation": True,
            **self.given,
            **self.outcome,
        }

    def affected_nodes(self) -> list[Node]:
        return []

    def inject(self) -> Fault:
        started = time.monotonic()
        try:
            super().inject()
        except Exception as exc:
            self.outcome.update(
                completed=False,
                error=str(exc).splitlines()[0] if str(exc) else repr(exc),
                elapsed_s=round(time.monotonic() - started, 3),
            )
            self.cluster.history.append("fault.heal", fault_id=self.id, **self.describe())
            raise
        self.outcome.update(completed=True, elapsed_s=round(time.monotonic() - started, 3))
        self.heal()
        return self

    def _heal(self) -> None:
        """Nothing to undo: the operation stays done."""

    def wait_full_isr(self, after: str) -> float:
        """Until no partition is under-replicated (bounded by timeout_s), as an operator's
        runbook waits between two nodes; the seconds it took."""
        begun = time.monotonic()
        wait_until(
            self.ops.under_replicated,
            self.timeout_s,
            f"every partition's ISR full again after {after}",
            done=lambda urp: not urp,
            retry_on=Exception,
        )
        return round(time.monotonic() - begun, 3)
