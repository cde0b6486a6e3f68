"""A pipeline's members: a consumer group (the set "pipeline") whose processes also write."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.results.history import History
from harness.workload.group_consumers import GroupConsumers, GroupSettings, member_command


@dataclass
class PipelineSettings(GroupSettings):
    output: str = "chaos-out"
    guarantee: str = "exactly-once"
    transactional_id: str = "chaos-pipeline"  # member i: "<id>-<i>"
    txn_timeout_ms: int = 60000
    producer_config: dict[str, Any] = field(default_factory=dict)


class PipelineMembers(GroupConsumers):
    """Started, crashed, restarted and drained like any group; each member is a
    `harness.workload.pipeline_member` process."""

    def __init__(self, settings: PipelineSettings, directory: Path, history: History) -> None:
        super().__init__(settings, directory, history)
        self.p = settings

    def command(self, name: str) -> list[str]:
        index = self.names.index(name)
        base = member_command(self.p, name, self.directory)
        base[2] = "harness.workload.pipeline_member"  # [python, -m, module, options...]
        return [
            *base,
            "--output",
            self.p.output,
            "--guarantee",
            self.p.guarantee,
            "--transactional-id",
            f"{self.p.transactional_id}-{index}",
            "--txn-timeout-ms",
            str(self.p.txn_timeout_ms),
            "--producer-config",
            json.dumps(self.p.producer_config),
        ]
