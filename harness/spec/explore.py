"""`explore:`: what `harness explore` may draw for a spec (docs/exploring.md).

Shapes only, like every model of the spec; what the cell's cluster supports (modes, broker
count, controllers) is checked per cell by harness.spec.explore_rules. The model lives in the
spec layer, not in harness.explore (which draws and shrinks), because the spec holds it as
an optional key and nothing below the runner may import a layer above it.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field, field_validator

from harness.common.spec_base import MAX_SECONDS, StrictModel
from harness.faults.drawing import ROLES, Role
from harness.faults.registry import ALIASES, SPEC_KINDS

# Targets by role (Jepsen's nemesis targets; harness.faults.drawing): one broker, a minority or
# a majority of the brokers, the leader of a partition of the spec's topic, the active
# controller, every Kafka node at once, a workload process, a target the kind picks itself.
MAX_FAULTS = 10  # a schedule of more is not a schedule a person can read, nor shrink cheaply


def drawable_kinds() -> tuple[str, ...]:
    """Kinds explore can draw: those whose module says how (`FaultKind.drawing`)."""
    return tuple(k.name for k in SPEC_KINDS.values() if k.drawing is not None)


def default_kinds() -> tuple[str, ...]:
    """Kinds drawn when `explore.kinds` is not given (each kept where the cell supports it):
    every drawable kind but those that change the cell's own subject (versions, mode)."""
    return tuple(
        k.name for k in SPEC_KINDS.values() if k.drawing is not None and k.drawing.by_default
    )


def _kind(raw: str) -> str:
    kind = ALIASES.get(raw, raw)
    if kind not in drawable_kinds():
        why = (
            "no fault kind"
            if kind not in SPEC_KINDS
            else "never drawn (it changes the cell itself)"
        )
        raise ValueError(f"{raw!r}: {why}; explore draws {', '.join(drawable_kinds())}")
    return kind


Seconds = Annotated[float, Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]


def _range(value: list[float]) -> list[float]:
    if len(value) != 2:
        raise ValueError(f"expected [min, max] (got {len(value)} number(s))")
    if value[0] > value[1]:
        raise ValueError(f"expected min <= max (got {value})")
    return value


Range = Annotated[list[Seconds], AfterValidator(_range)]


class QuietSpec(StrictModel):
    """`explore.quiet`: no fault starts in the workload's first `start_s` seconds (its steady
    state) nor in its last `end_s` seconds (so the workload sees the cluster after it)."""

    start_s: Seconds = 5.0
    end_s: Seconds = 5.0


class ExploreSpec(StrictModel):
    """`explore:`; every key optional. `kinds` and `targets` default to every default kind
    and role the cell's cluster supports."""

    kinds: list[Annotated[str, AfterValidator(_kind)]] | None = Field(default=None, min_length=1)
    targets: list[Role] | None = Field(default=None, min_length=1)
    max_faults: int = Field(default=3, ge=1, le=MAX_FAULTS)
    # How long a fault lasts (an operation: instant). Up to 30 s so that most draws outlast
    # Kafka's failure detectors (KRaft's broker.session.timeout.ms 9 s, ZooKeeper's session
    # 18 s): a fault shorter than the detector is a blip no leader moves for, and a schedule
    # whose fault sits at the edge reproduces by luck (explore-acks1: 11.2 s, 2 of 3).
    duration_s: Range = [5.0, 30.0]
    gap_s: Range = [0.0, 15.0]  # from one fault's start to the next one's (may overlap)
    quiet: QuietSpec = QuietSpec()

    @field_validator("duration_s")
    @classmethod
    def _positive(cls, value: list[float]) -> list[float]:
        if value[0] <= 0:
            raise ValueError(f"expected durations > 0 (got {value})")
        return value

    @field_validator("kinds", "targets")
    @classmethod
    def _once(cls, value: list[Any] | None) -> list[Any] | None:
        if value is not None and len(set(value)) != len(value):
            raise ValueError(f"expected each at most once (got {value})")
        return value


__all__ = [
    "MAX_FAULTS",
    "ROLES",
    "ExploreSpec",
    "QuietSpec",
    "Role",
    "default_kinds",
    "drawable_kinds",
]
