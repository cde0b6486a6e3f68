"""Connection resets on a node's links (Toxiproxy's reset_peer): TCP RST, then reconnects.

Every connection in scope that carries data while the toxic is on is closed with a RST
(linger 0) on both sides of its proxy. The toxic stays on for RESET_WINDOW_S per reset: a
Kafka connection carries data well within it (fetches long-poll 500 ms, heartbeats every
3 s go over the coordinator's connection only, so a reset reaches it one time in three).
New connections are allowed between resets; one opened inside a window is reset too.
Once (no duration: an operation), or every `every_s` for `duration_s`.
"""

from __future__ import annotations

import random
import threading
from typing import Any, ClassVar

from pydantic import Field

from harness.common.spec_base import MAX_SECONDS
from harness.faults.base import Fault
from harness.faults.control import ChaosTarget, NodeControl, NodeRef
from harness.faults.drawing import Drawing, between
from harness.faults.kind import CellView, FaultKind, Needs, Problem, required
from harness.faults.link_rules import drawn_scope, scope_problems
from harness.faults.links import LinkFault, Scope
from harness.nodes.capabilities import LinkProxies

RESET_WINDOW_S = 1.0
MIN_EVERY_S = 2.0


class ResetFault(LinkFault):
    """History: every_s, scope, links; at heal also resets (windows done) and the toxic counts."""

    kind = "reset"
    toxic = "reset_peer"

    def __init__(
        self,
        cluster: NodeControl,
        target: NodeRef,
        every_s: float | None = None,
        scope: Scope | None = None,
    ) -> None:
        super().__init__(cluster, target, scope)
        self.every_s = every_s
        self.resets = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def parameters(self) -> dict[str, Any]:
        return {"every_s": self.every_s, "resets": self.resets}

    def attributes(self, stream: str) -> dict[str, int]:
        return {"timeout": 0}  # at the first data through it

    @property
    def level(self) -> str:
        often = f" every {self.every_s:g} s" if self.every_s else ""
        return f"reset{often} {self.scope}"

    def inject(self) -> Fault:
        super().inject()
        if self.every_s is None:  # once: done when inject returns
            self.heal()
        return self

    def _inject(self) -> None:
        self.reset_once()
        if self.every_s is not None:
            self._thread = threading.Thread(
                target=self._repeat, args=(self.every_s,), name=f"reset-{self.id}", daemon=True
            )
            self._thread.start()

    def _repeat(self, every_s: float) -> None:
        while not self._stop.wait(max(0.0, every_s - RESET_WINDOW_S)):
            try:
                self.reset_once()
            except BaseException as exc:  # recorded at heal
                self._error = exc
                return

    def reset_once(self) -> None:
        self.place()
        try:
            self._stop.wait(RESET_WINDOW_S)
        finally:
            lifted = self.lift()
            for key in ("toxics_removed", "toxics_gone"):  # summed over the resets
                lifted[key] += int(self.counts.get(key, 0))
            self.counts = {**self.counts, **lifted}
            self.resets += 1

    def _heal(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=RESET_WINDOW_S + 30)
        if self._error is not None:
            self.counts["error"] = f"{type(self._error).__name__}: {self._error}"


class Reset(FaultKind):
    """`{kind: reset, target: ..., scope: clients}` once, or with `every_s` for `duration_s`."""

    name: ClassVar[str] = "reset"
    drawing: ClassVar[Drawing | None] = Drawing()
    zookeeper_target: ClassVar[bool] = True
    needs: ClassVar[Needs] = (LinkProxies,)

    every_s: float | None = Field(default=None, ge=MIN_EVERY_S, le=MAX_SECONDS, allow_inf_nan=False)
    scope: Scope | None = None  # all (default), clients, replication, controller

    @classmethod
    def drawn_options(cls, rng: random.Random | None, cell: CellView) -> dict[str, Any]:
        """every_s: 2-10 s (explore draws a duration, so the resets repeat: a few to a dozen
        of them in a 5-30 s fault); scope: clients, replication, controller or all
        (harness.faults.link_rules.drawn_scope)."""
        return {"every_s": between(rng, MIN_EVERY_S, 10.0), "scope": drawn_scope(rng, cell)}

    def rules(self, cell: CellView) -> list[Problem]:
        out: list[Problem] = []
        if (self.every_s is None) != (self.duration_s is None):
            key = "every_s" if self.every_s is None else "duration_s"
            out.append(
                (key, "reset takes both every_s and duration_s (repeated) or neither (once)")
            )
        return out + scope_problems(self, self.scope, cell)

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> ResetFault:
        return ResetFault(cluster, required(target), self.every_s, self.scope)
