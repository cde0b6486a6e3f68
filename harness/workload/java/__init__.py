"""Kafka's Java clients as the workload's producer and group members (`client: java`)."""
