"""A fault's own settings from the spec (`to`, `loss`, `sides`...), typed once for every kind.

The spec's FaultSpec carries the same names; the registry says which of them each kind takes.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

Side = Literal["minority", "majority"]
LossScope = Literal["all", "replication", "clients"]

DEFAULT_OPERATION_TIMEOUT_S = 180.0  # an operation not complete by then is a fault.error


@dataclass(frozen=True)
class FaultOptions:
    to: tuple[int, ...] | None = None  # reassign: the new replica list (leader first)
    replication_factor: int | None = None  # reassign: a topic's new replication factor
    count: int | None = None  # add-partitions: the topic's new partition count
    sides: tuple[tuple[int | str, ...], ...] | None = None  # split: node ids / names per side
    side: Side | None = None  # split: which side the target is on
    zookeeper_side: Side | None = None  # split: where ZooKeeper and dedicated controllers go
    loss: float | None = None  # lossy: fraction of packets dropped
    scope: LossScope | None = None  # lossy: all links, only between brokers, only to clients
    hard: bool | None = None  # restart, rolling-restart: SIGKILL instead of a graceful stop
    brokers: tuple[int, ...] | None = None  # rolling-restart: these brokers, in this order
    timeout_s: float | None = None  # operations: bound on waiting for completion
    wipe: bool | None = None  # kill: the broker returns with empty log directories

    @property
    def operation_timeout_s(self) -> float:
        return self.timeout_s if self.timeout_s is not None else DEFAULT_OPERATION_TIMEOUT_S

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def of(cls, values: dict[str, Any]) -> FaultOptions:
        """From spec values (lists become tuples); keys that are not options are ignored."""
        known = set(cls.names())
        out: dict[str, Any] = {}
        for key, value in values.items():
            if key not in known or value is None:
                continue
            if key == "sides":
                value = tuple(tuple(side) for side in value)
            elif isinstance(value, list):
                value = tuple(value)
            out[key] = value
        return cls(**out)

    def given(self) -> dict[str, Any]:
        """The options set, for the history (tuples as lists)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                out[f.name] = (
                    [list(v) if isinstance(v, tuple) else v for v in value]
                    if isinstance(value, tuple)
                    else value
                )
        return out
