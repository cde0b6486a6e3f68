"""Rules across a spec's fields, checked per matrix cell: `(key path, what was expected)` pairs.

Pydantic checks each field's shape (harness.spec.models); what depends on several fields
(ZooKeeper needs 3.x, a consumer-crash names a member that exists, a setting the spec owns
through its own key) is checked here, once a matrix cell is complete.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.faults.cell_view import DEFAULT_OFFSETS_RF
from harness.faults.kind import CellView, FaultKind
from harness.nodes.capabilities import Capabilities, Shape
from harness.nodes.migration_config import migration_problems
from harness.nodes.topology import (
    CONTROLLER_ID_BASE,
    JBOD_KRAFT_SINCE,
    MANAGED_KEYS,
    MAX_BROKERS,
    quorum_problems,
    version_tuple,
)
from harness.results.events import PIPELINE_SET
from harness.spec.consumers import COMMAND_ENV
from harness.spec.expect import metric_problem
from harness.spec.explore_rules import explore_problems
from harness.spec.group_protocol import group_protocol_problems, pipeline_protocol_problems
from harness.spec.java_problems import java_group_problems, java_producer_problems
from harness.spec.models import (
    ClusterSpec,
    CommandPipelineSpec,
    GroupConsumerSpec,
    PipelineSpec,
    ProducerSpec,
    SparkConsumerSpec,
    Spec,
)
from harness.spec.paths import number_at
from harness.spec.share_settings import share_problems

# Producer/consumer settings the spec owns through its own keys.
_PRODUCER_OWNED = {
    "acks": "producer.acks",
    "request.required.acks": "producer.acks",
    "enable.idempotence": "producer.enable_idempotence",
    "bootstrap.servers": "the cluster",
    "transactional.id": "producer.transactions.transactional_id",
    "transaction.timeout.ms": "producer.transactions.timeout_ms",
}
# Kafka source options a Spark consumer's own keys set (harness.workload.spark.member).
_SPARK_OWNED = {
    "kafka.bootstrap.servers": "the cluster",
    "subscribe": "the spec's topic",
    "subscribePattern": "the spec's topic",
    "assign": "the spec's topic",
    "startingOffsets": "consumer.starting_offsets",
    "failOnDataLoss": "consumer.fail_on_data_loss",
    "maxOffsetsPerTrigger": "consumer.max_offsets_per_trigger",
}
_CONSUMER_OWNED = {
    "group.id": "consumer.group",
    "enable.auto.commit": "consumer.commit",
    "bootstrap.servers": "the cluster",
}


Problem = tuple[str, str]  # (key path, what was expected)


def spec_problems(spec: Spec) -> list[Problem]:
    """Rules across fields; every problem names its key path."""
    out: list[Problem] = []
    out += _cluster_problems(spec.cluster)
    out += [
        (f"cluster.{key}", why)
        for key, why in migration_problems(
            spec.cluster.mode,
            spec.cluster.version,
            spec.cluster.migration_controllers,
            spec.cluster.spare_brokers,
        )
    ]
    c = spec.cluster
    shape = Shape(c.mode, c.version, c.migration_controllers)
    caps = spec.capabilities()
    out += [(f"cluster.{k}", why) for k, why in Capabilities(caps).spec_problems(shape)]
    out += _plfs_problems(spec, caps)
    if spec.topic.replication_factor > c.brokers:
        out.append(
            (
                "topic.replication_factor",
                f"expected <= cluster.brokers ({c.brokers}) (got {spec.topic.replication_factor})",
            )
        )
    out += _offsets_problems(spec)
    out += _producer_problems(spec.producer)
    out += java_producer_problems(spec.producer, spec.cluster.version)
    out += _consumer_problems(spec)
    out += share_problems(spec)
    if spec.pipeline is not None:
        out += _pipeline_problems(spec, spec.pipeline)
    if spec.faults:  # each fault's kind says what it needs of the cell (harness.faults.kind)
        cell = cell_view(spec)
        for i, fault in enumerate(spec.faults):
            out += [(f"faults[{i}].{k}", msg) for k, msg in fault.problems(cell)]
            out += [  # it needs a capability the spec turns off
                (f"faults[{i}].kind", need.refused.format(kind=fault.kind, title=need.title))
                for need in fault.cluster_needs()
                if need.refuses(c)
            ]
            out += _after_step_problems(spec, cell, i, fault)
    if spec.explore is not None:  # what it may draw, on this cell without its own faults
        out += explore_problems(spec, cell_view(spec.model_copy(update={"faults": []})))
    set_names = [name for name, _ in spec.consumer_sets()]
    if spec.pipeline is not None:
        set_names.append(PIPELINE_SET)
    for metric, bound in spec.expect.items():
        why = metric_problem(metric, bound, set_names)
        if why is None and _unseen_set(spec, metric):
            why = (
                "a command pipeline's consumption is not seen by the harness (its set is left "
                "out of the consumer checks); expect output_lost / output_duplicates instead"
            )
        if why is None and bound is not None and bound.ref is not None:
            try:
                number_at(spec, bound.ref)
            except ValueError as exc:
                why = f"'{bound}' cannot be resolved in this cell: {exc}"
        if why:
            out.append((f"expect.{metric}", why))
    return out


def _after_step_problems(spec: Spec, cell: CellView, i: int, fault: FaultKind) -> list[Problem]:
    """`after_step` names a step of an operation the same spec plans (harness.faults.step_trigger)."""
    if fault.after_step is None:
        return []
    key = f"faults[{i}].after_step"
    if fault.operation:
        return [(key, f"{fault.kind} is an operation: operations take turns by at_s")]
    words = dict.fromkeys(w for f in spec.faults for w in f.step_words(cell))
    if not words:
        return [(key, "no fault of this spec has steps to wait for (upgrade, migrate-to-kraft)")]
    if fault.after_step not in words:
        return [(key, f"no step answers to {fault.after_step!r} (here: {', '.join(words)})")]
    return []


def _unseen_set(spec: Spec, metric: str) -> bool:
    """A per-set metric of a command pipeline's set: the consumer checks never decide it."""
    return isinstance(spec.pipeline, CommandPipelineSpec) and metric.endswith(f".{PIPELINE_SET}")


def cell_view(spec: Spec) -> CellView:
    """What a fault kind's rules may read of this cell."""
    c = spec.cluster
    grown = [n for f in spec.faults if (n := f.grown_partitions()) is not None]
    return CellView(
        mode=c.mode,
        brokers=tuple(range(1, c.brokers + 1)),
        spares=tuple(range(c.brokers + 1, c.brokers + c.spare_brokers + 1)),
        controllers=tuple(CONTROLLER_ID_BASE + i for i in range(1, c.controllers + 1)),
        topic=spec.topic.name,
        partitions=spec.topic.partitions,
        grown_partitions=max([spec.topic.partitions, *grown]),
        replication_factor=spec.topic.replication_factor,
        broker_config=c.broker_config,
        default_group=spec.default_group(),
        transactional_ids=tuple(transactional_ids(spec)),
        member_counts=member_counts(spec),
        has_pipeline=spec.pipeline is not None,
        log_dirs=c.log_dirs,
        version=c.version,
        migration_controllers=tuple(
            CONTROLLER_ID_BASE + i for i in range(1, c.migration_controllers + 1)
        ),
        producer_client=spec.producer.client,
        share_groups=tuple(spec.share_groups()),
        dynamic_quorum=c.dynamic_quorum,
        spare_controllers=tuple(
            CONTROLLER_ID_BASE + i
            for i in range(c.controllers + 1, c.controllers + c.spare_controllers + 1)
        ),
        planned=tuple((f.at_s, f.kind) for f in spec.faults),
    )


def transactional_ids(spec: Spec) -> list[str]:
    """The transactional ids of the cell's clients: the producer's, each pipeline member's."""
    ids = (
        [] if spec.producer.transactions is None else [spec.producer.transactions.transactional_id]
    )
    p = spec.pipeline
    if p is not None:
        # At-least-once members are not transactional: the id then names the broker that
        # would coordinate it, so the two guarantees of one experiment lose the same broker.
        ids += [p.member_transactional_id(i) for i in range(p.members)]
    return ids


def member_counts(spec: Spec) -> dict[str, int]:
    """Members per consumer set, the pipeline's ("pipeline") included."""
    counts = {name: c.members for name, c in spec.consumer_sets()}
    if spec.pipeline is not None:
        counts[PIPELINE_SET] = spec.pipeline.members
    return counts


def impossible_cluster(mode: str, version: str) -> str | None:
    """Why a cluster of this mode and version cannot exist (None: it can).

    The one rule: ZooKeeper mode needs a 3.x version (4.0 removed ZooKeeper). A suite leaves
    such cells out of its plan (harness.suite.plan); an experiment file naming one is wrong.
    """
    major = int(version.split(".", 1)[0])
    if mode == "zookeeper" and major != 3:
        return f"Kafka {version} has no ZooKeeper mode (ZooKeeper needs 3.x; 4.0 removed it)"
    return None


def _plfs_problems(spec: Spec, caps: Mapping[str, Any]) -> list[Problem]:
    """plfs keeps each node's backing folder on the container's own disk, under one log
    directory: nothing that needs the log directories elsewhere, or moves them."""
    if not caps.get("power_loss_fs"):
        return []
    why = "expected off with {} (plfs serves one log directory from the container's own disk)"
    out: list[Problem] = []
    if caps.get("log_dir_size_mb") is not None:
        out.append(("cluster.power_loss_fs", why.format("sized log directories")))
    if caps.get("persistent_data"):
        out.append(("cluster.power_loss_fs", why.format("persistent log directories (upgrade)")))
    if any(f.kind == "kill" and getattr(f, "wipe", False) for f in spec.faults):
        out.append(("cluster.power_loss_fs", why.format("kill wipe")))
    return out


def _cluster_problems(c: ClusterSpec) -> list[Problem]:
    out: list[Problem] = []
    if impossible_cluster(c.mode, c.version) is not None:
        out.append(
            (
                "cluster.version",
                f"expected a 3.x version in zookeeper mode (ZooKeeper was removed in 4.0) (got {c.version})",
            )
        )
    if c.brokers + c.spare_brokers > MAX_BROKERS:
        out.append(
            (
                "cluster.spare_brokers",
                f"expected brokers + spare_brokers <= {MAX_BROKERS} (got {c.brokers} + {c.spare_brokers})",
            )
        )
    if c.mode == "zookeeper" and c.controllers:
        out.append(("cluster.controllers", f"expected 0 in zookeeper mode (got {c.controllers})"))
    out += [
        (f"cluster.{key}", why)
        for key, why in quorum_problems(
            c.mode, c.version, c.controllers, c.dynamic_quorum, c.spare_controllers
        )
    ]
    if c.log_dirs > 1 and c.mode == "kraft" and version_tuple(c.version) < JBOD_KRAFT_SINCE:
        out.append(
            (
                "cluster.log_dirs",
                f"expected 1 in KRaft mode before Kafka 3.7 (KIP-858: JBOD) (got {c.log_dirs} "
                f"on {c.version})",
            )
        )
    for key in sorted(MANAGED_KEYS & set(c.broker_config)):
        out.append(
            (
                f"cluster.broker_config.{key}",
                "the harness sets this to wire the containers together; remove it",
            )
        )
    return out


def _offsets_problems(spec: Spec) -> list[tuple[str, str]]:
    """A consumer group (or a pipeline, or a share group, whose coordinator is also a
    partition of it) needs __consumer_offsets, which Kafka creates only with
    offsets.topic.replication.factor brokers (its default 3): with fewer, the steady state
    would wait for it in vain."""
    c = spec.cluster
    groups = spec.pipeline is not None or any(
        s.kind in ("group", "share") for _, s in spec.consumer_sets()
    )
    key = "offsets.topic.replication.factor"
    rf = c.broker_config.get(key, DEFAULT_OFFSETS_RF)
    if not groups or not isinstance(rf, int) or isinstance(rf, bool) or rf <= c.brokers:
        return []
    said = f"got {rf}" if key in c.broker_config else f"Kafka's default {rf}"
    return [
        (
            f"cluster.broker_config.{key}",
            f"expected <= cluster.brokers ({c.brokers}) ({said}): a consumer group needs "
            "__consumer_offsets, which Kafka cannot create on fewer brokers",
        )
    ]


def _producer_problems(p: ProducerSpec) -> list[Problem]:
    out: list[Problem] = []
    if p.records is None and p.duration_s is None:
        out.append(("producer", "expected records, duration_s or both (got neither)"))
    if p.enable_idempotence and p.acks != "all":
        out.append(
            (
                "producer.enable_idempotence",
                f"true needs acks=all (librdkafka refuses idempotence otherwise) (got acks={p.acks})",
            )
        )
    if p.client == "librdkafka":  # a Java producer's settings: harness.spec.java_problems
        for where, block in (
            ("config", p.config),
            ("client_config.librdkafka", p.client_config.librdkafka),
        ):
            for key in sorted(set(block) & set(_PRODUCER_OWNED)):
                out.append(
                    (f"producer.{where}.{key}", f"set through {_PRODUCER_OWNED[key]} instead")
                )
    if p.transactions is not None:
        if p.acks != "all":
            out.append(
                ("producer.acks", f"a transactional producer needs acks=all (got acks={p.acks})")
            )
        if p.enable_idempotence is False:
            out.append(
                (
                    "producer.enable_idempotence",
                    "a transactional producer is idempotent; remove false or the transactions",
                )
            )
    return out


def _consumer_problems(spec: Spec) -> list[Problem]:
    out: list[Problem] = []
    if spec.consumer is not None and spec.consumers is not None:
        out.append(("consumers", "give either consumer or consumers, not both"))
        return out
    if spec.consumers is not None and not spec.consumers:
        out.append(("consumers", "expected at least one consumer set (got an empty list)"))
    groups: dict[str, str] = {}
    for i, (name, c) in enumerate(spec.consumer_sets()):
        path = spec.consumer_path(i)
        if isinstance(c, GroupConsumerSpec):
            if c.group in groups:
                out.append(
                    (
                        f"{path}.group",
                        f"group {c.group!r} is already used by set {groups[c.group]}; "
                        "give each group set its own group",
                    )
                )
            groups.setdefault(c.group, name)
            out += java_group_problems(path, c, spec.cluster.version)
            out += group_protocol_problems(path, c)
            if c.client == "java":
                continue
            for where, block in (
                ("config", c.config),
                ("client_config.librdkafka", c.client_config.librdkafka),
            ):
                for key in sorted(set(block) & set(_CONSUMER_OWNED)):
                    owner = _CONSUMER_OWNED[key].replace("consumer", path, 1)
                    out.append((f"{path}.{where}.{key}", f"set through {owner} instead"))
        elif isinstance(c, SparkConsumerSpec):
            for key in sorted(set(c.config) & set(_SPARK_OWNED)):
                owner = _SPARK_OWNED[key].replace("consumer", path, 1)
                out.append((f"{path}.config.{key}", f"set through {owner} instead"))
    return out


# The pipeline's member settings its own keys (or the harness) set.
_PIPELINE_CONSUMER_OWNED = {
    "group.id": "pipeline.group",
    "enable.auto.commit": "pipeline.guarantee",
    "bootstrap.servers": "the cluster",
}
_PIPELINE_PRODUCER_OWNED = {
    "transactional.id": "pipeline.transactional_id",
    "transaction.timeout.ms": "pipeline.timeout_ms",
    "enable.idempotence": "the pipeline (always on)",
    "acks": "the pipeline (always all)",
    "request.required.acks": "the pipeline (always all)",
    "bootstrap.servers": "the cluster",
}


def _pipeline_problems(spec: Spec, p: PipelineSpec | CommandPipelineSpec) -> list[Problem]:
    out: list[Problem] = []
    if p.input is not None and p.input != spec.topic.name:
        out.append(
            ("pipeline.input", f"expected the spec's topic {spec.topic.name!r} (got {p.input!r})")
        )
    if p.output == spec.topic.name:
        out.append(("pipeline.output", f"expected a topic other than the input {p.output!r}"))
    groups = {c.group for _, c in spec.consumer_sets() if isinstance(c, GroupConsumerSpec)}
    if p.group in groups:
        out.append(("pipeline.group", f"group {p.group!r} is a consumer set's; give another"))
    if isinstance(p, CommandPipelineSpec):
        for key in sorted(set(p.env) & set(COMMAND_ENV)):
            out.append((f"pipeline.env.{key}", "set by the harness for each member; remove it"))
        return out
    for key in sorted(set(p.config) & set(_PIPELINE_CONSUMER_OWNED)):
        out.append((f"pipeline.config.{key}", f"set through {_PIPELINE_CONSUMER_OWNED[key]}"))
    out += pipeline_protocol_problems(p.config)
    for key in sorted(set(p.producer_config) & set(_PIPELINE_PRODUCER_OWNED)):
        why = _PIPELINE_PRODUCER_OWNED[key]
        out.append((f"pipeline.producer_config.{key}", f"set through {why}"))
    return out
