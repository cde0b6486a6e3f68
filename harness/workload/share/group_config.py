"""A share group's own settings (Kafka's group configs, KIP-932), set before it has members.

`share.auto.offset.reset` is the one the harness needs: a share group starts a partition at
its end by default, so records written before the partition's first fetch would never be
delivered; the workload's ledger counts them, so the group starts at the beginning.
"""

from __future__ import annotations

from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)

from harness.common.waiting import wait_until
from harness.errors import HarnessError, WaitTimeout

GROUP_CONFIG = {"share.auto.offset.reset": "earliest"}
TIMEOUT_S = 30.0


def set_group_config(bootstrap: str, group: str, settings: dict[str, str]) -> None:
    """IncrementalAlterConfigs on the group, retried until the brokers take it (bounded);
    HarnessError naming the last refusal otherwise."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource(
        ResourceType.GROUP,
        group,
        incremental_configs=[
            ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET)
            for k, v in settings.items()
        ],
    )

    def attempt() -> str | None:
        try:
            for future in admin.incremental_alter_configs([resource]).values():
                future.result(timeout=10)
        except KafkaException as exc:
            return str(exc.args[0])
        return None

    try:
        wait_until(
            attempt,
            TIMEOUT_S,
            f"share group {group!r} configured",
            done=lambda error: error is None,
            interval_s=1.0,
        )
    except WaitTimeout as exc:
        raise HarnessError(f"share group {group!r}: its configs were refused: {exc.last}") from None
