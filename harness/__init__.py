"""kafka-chaos: chaos experiments on real Kafka clusters in Docker."""

from harness.cluster import DEFAULT_VERSION, KafkaCluster
from harness.errors import (
    ClusterStartError,
    ConfigError,
    FaultError,
    HarnessError,
    ImageMissingError,
)
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
from harness.history import History

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
