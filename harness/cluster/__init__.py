"""The cluster: lifecycle of a multi-broker Kafka cluster and the admin views faults need."""

from harness.cluster.kafka_cluster import KafkaCluster, docker_client

__all__ = ["KafkaCluster", "docker_client"]
