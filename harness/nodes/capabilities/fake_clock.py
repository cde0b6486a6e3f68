"""A fake clock: every Kafka node's JVM under libfaketime (not ZooKeeper's).

What a fault that skews a node's clock acts on (harness.faults.clock): a wrapper entry
point, mounted (docker/clock-entrypoint.sh), preloads libfaketime and reads the node's
wall-clock offset from a file (`+0` until a skew); then the next entry point (the link
proxies' or the image's own). Off, the nodes start exactly as without it. Spec
`cluster.fake_clock` (default: on when a planned fault skews a node),
`KafkaCluster(fake_clock=True)`, marker key `fake_clock`, `with_fake_clock()`;
`cluster.start` carries `fake_clock: true`. Client processes get theirs from
harness.common.faketime.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Self, TypedDict

from harness.common.spec_base import StrictModel
from harness.nodes.capabilities.base import BuilderMethods, Entrypoint, Switch, Wiring
from harness.nodes.topology import NodeSpec

CLOCK_DIR = "/opt/kafka-chaos-clock"  # the fake clock's entry point, mounted read-only
CLOCK_ENTRYPOINT = Path(__file__).resolve().parents[3] / "docker" / "clock-entrypoint.sh"


class Options(TypedDict, total=False):
    fake_clock: bool


class SpecKeys(StrictModel):
    # Every Kafka node's JVM under libfaketime (harness.faults.clock). None: when a planned
    # fault skews a node's clock.
    fake_clock: bool | None = None


class Builder(BuilderMethods):
    def with_fake_clock(self, on: bool = True) -> Self:
        """Every Kafka node's JVM under libfaketime: what a clock skew on a node acts on."""
        return self._set(fake_clock=on)


class FakeClock(Switch[SpecKeys], builder=Builder):
    key = "fake_clock"
    title = "fake clock"
    doc = "every Kafka node's JVM under libfaketime, its wall clock off by what a file says"
    missing = (
        "{kind} on a node needs its JVM under libfaketime: start the cluster with "
        "fake_clock=True (a spec that plans a {kind} on a node gets it)"
    )
    refused = "{kind} on a node needs cluster.fake_clock"

    def wire(self, node: NodeSpec, nodes: Sequence[NodeSpec], run_id: str) -> Wiring:
        """Its wrapper entry point, mounted, outside any other."""
        if not self.on:
            return Wiring()
        return Wiring(
            mounts={str(CLOCK_ENTRYPOINT): f"{CLOCK_DIR}/entrypoint"},
            entrypoints=(Entrypoint(f"{CLOCK_DIR}/entrypoint", wraps=True),),
        )
