"""A pipeline's members: a consumer group (the set "pipeline") whose processes also write."""

from __future__ import annotations

from harness.workload.group.supervisor import GroupSupervisor


class PipelineSupervisor(GroupSupervisor):
    """Started, crashed, restarted and drained like any group (its spec a PipelineSpec);
    each member is a `harness.workload.pipeline.member` process."""

    member_module = "harness.workload.pipeline.member"
