"""kafka-chaos: chaos experiments on real Kafka clusters in Docker.

Importing `harness` is light: the cluster (docker, testcontainers) and the faults load
only when one of their names is first used, so the checks and the consumer processes,
which import `harness.results`, never load Docker.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from harness.errors import (
    ClusterStartError,
    ConfigError,
    FaultError,
    HarnessError,
    ImageMissingError,
)
from harness.results.history import History

if TYPE_CHECKING:
    from harness.cluster import KafkaCluster
    from harness.faults import (
        ClientCutFault,
        Fault,
        KillFault,
        PartitionFault,
        PauseFault,
        RestartFault,
        StopFault,
        Target,
    )
    from harness.nodes.topology import DEFAULT_VERSION

_LAZY = {
    "DEFAULT_VERSION": "harness.nodes.topology",  # so the checks never load harness.nodes
    "KafkaCluster": "harness.cluster",
    "ClientCutFault": "harness.faults",
    "Fault": "harness.faults",
    "KillFault": "harness.faults",
    "PartitionFault": "harness.faults",
    "PauseFault": "harness.faults",
    "RestartFault": "harness.faults",
    "StopFault": "harness.faults",
    "Target": "harness.faults",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "DEFAULT_VERSION",
    "ClientCutFault",
    "ClusterStartError",
    "ConfigError",
    "Fault",
    "FaultError",
    "HarnessError",
    "History",
    "ImageMissingError",
    "KafkaCluster",
    "KillFault",
    "PartitionFault",
    "PauseFault",
    "RestartFault",
    "StopFault",
    "Target",
]
