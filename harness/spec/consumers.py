"""The spec's consumer kinds: one typed model per kind, and the union `consumer:` and
`consumers:` take (`pipeline:` takes its own union: `transform`, ours, or `command`, the
user's program).

Each model is also what its member processes get (`--spec`, its pydantic JSON: immutable,
serialisable, typed per kind, as Kafka Trogdor's TaskSpec), so this module imports only
pydantic and harness.common.spec_base: a child process loads no fault, cluster or Docker
code (import-linter contract "light-processes"). The kind word of a set is its model's
`kind` default; harness.workload.consumer_kinds maps each kind to what runs it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args

from pydantic import Discriminator, Field, StringConstraints, Tag

from harness.common.spec_base import (
    MAX_MEMBERS,
    MAX_MS,
    MAX_RECORDS,
    Client,
    ClientSettings,
    Name,
    Settings,
    StrictModel,
)


class GroupConsumerSpec(StrictModel):
    kind: Literal["group"] = "group"
    client: Client = "librdkafka"
    group: Annotated[str, StringConstraints(min_length=1)] = "chaos-group"
    members: int = Field(default=1, ge=1, le=MAX_MEMBERS)
    commit: Literal["auto", "after-process", "before-process"] = "after-process"
    # Simulated work per polled batch (ms): the member sleeps that long between poll and write.
    processing_ms: int = Field(default=0, ge=0, le=MAX_MS)
    # Extra work per batch, drawn uniformly from 0..processing_jitter_ms (seeded by the cell's
    # seed and the member): real batches vary, and only a varying batch overruns
    # max.poll.interval.ms now and then instead of always or never.
    processing_jitter_ms: int = Field(default=0, ge=0, le=MAX_MS)
    config: Settings = {}
    client_config: ClientSettings = ClientSettings()

    @property
    def client_settings(self) -> Settings:
        """What the chosen client is given: `config`, its `client_config` block over it."""
        return self.client_config.over(self.config, self.client)


KAFKA_LOCK_MS = 30_000  # Kafka's group.share.record.lock.duration.ms


class ShareConsumerSpec(StrictModel):
    """A share group (KIP-932, Kafka 4.2+): `members` processes share the topic's partitions;
    the broker hands each record to one member under an acquisition lock and counts its
    deliveries. `ack: explicit` acknowledges every record itself: ACCEPT, or RELEASE when
    its seq is a multiple of `release_every` and REJECT when one of `reject_every` (by seq,
    so such a record meets the same answer every time it comes back: a poison record);
    `implicit` lets the client accept a poll's records on the next poll. `lock_ms` and
    `delivery_limit` set the brokers' `group.share.record.lock.duration.ms` and
    `group.share.delivery.count.limit` (Kafka's 30000 and 5 otherwise), `session_timeout_ms`
    their `group.share.session.timeout.ms`. `renew` (explicit, Java client: KIP-1222's RENEW,
    which confluent-kafka 2.16 lacks) keeps the locks of records still being worked on,
    renewing them on every turn of the poll loop (docs/workload.md)."""

    kind: Literal["share"] = "share"
    client: Client = "librdkafka"
    group: Annotated[str, StringConstraints(min_length=1)] = "chaos-share"
    members: int = Field(default=2, ge=1, le=MAX_MEMBERS)
    ack: Literal["explicit", "implicit"] = "explicit"
    processing_ms: int = Field(default=0, ge=0, le=MAX_MS)  # simulated work per polled batch
    processing_jitter_ms: int = Field(default=0, ge=0, le=MAX_MS)
    release_every: int = Field(default=0, ge=0, le=MAX_RECORDS)
    reject_every: int = Field(default=0, ge=0, le=MAX_RECORDS)
    lock_ms: int | None = Field(default=None, ge=1000, le=3_600_000)
    delivery_limit: int | None = Field(default=None, ge=2, le=10)
    # The brokers' group.share.session.timeout.ms (45 s by default, and its floor): how long
    # a killed member keeps its partitions assigned to nobody else.
    session_timeout_ms: int | None = Field(default=None, ge=3000, le=3_600_000)
    renew: bool = False
    config: Settings = {}
    client_config: ClientSettings = ClientSettings()

    @property
    def client_settings(self) -> Settings:
        """What the chosen client is given: `config`, its `client_config` block over it."""
        return self.client_config.over(self.config, self.client)

    @property
    def renew_ms(self) -> int:
        """The longest a renewing member's poll loop may wait between renewals (0: it does
        not renew): half the lock; the Java member caps it at its 500 ms poll."""
        return (self.lock_ms or KAFKA_LOCK_MS) // 2 if self.renew else 0

    def answer(self, seq: int) -> str:
        """What an explicit member answers a delivery of `seq`: reject, release or accept (a
        record that is not the workload's, seq -1, is accepted)."""
        if seq < 0:
            return "accept"
        if self.reject_every and seq % self.reject_every == 0:
            return "reject"
        if self.release_every and seq % self.release_every == 0:
            return "release"
        return "accept"


class SparkConsumerSpec(StrictModel):
    """A Structured Streaming query; `config` holds extra Kafka source options
    (`kafka.<client setting>`, `minPartitions`, …)."""

    kind: Literal["spark"] = "spark"
    config: Settings = {}
    trigger_ms: int = Field(default=1000, ge=1, le=MAX_MS)
    max_offsets_per_trigger: int | None = Field(default=None, ge=1, le=MAX_RECORDS)
    fail_on_data_loss: bool = True
    starting_offsets: Literal["earliest", "latest"] = "earliest"

    @property
    def members(self) -> int:
        """One streaming query: member index 0 ("spark/q")."""
        return 1


class PipelineSpec(StrictModel):
    """A consume-transform-produce pipeline: `members` processes read the input topic in a
    group and write each record (its seq, its input partition and offset) to `output`, into
    the input record's partition. `exactly-once` commits the input offsets inside the
    output's transaction (send_offsets_to_transaction); `at-least-once` produces, flushes,
    then commits. Its members are the consumer set "pipeline"."""

    kind: Literal["transform"] = "transform"
    input: Name | None = None  # the spec's topic (the only one the workload writes)
    output: Name = "chaos-out"
    guarantee: Literal["exactly-once", "at-least-once"] = "exactly-once"
    members: int = Field(default=2, ge=1, le=MAX_MEMBERS)
    group: Annotated[str, StringConstraints(min_length=1)] = "chaos-pipeline"
    # Member i's transactional.id is "<transactional_id>-<i>": a restarted member fences the
    # process it replaces (exactly-once only).
    transactional_id: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._-]+$")] = (
        "chaos-pipeline"
    )
    timeout_ms: int = Field(default=60000, ge=1000, le=MAX_MS)  # transaction.timeout.ms
    processing_ms: int = Field(default=0, ge=0, le=MAX_MS)  # simulated work per batch
    processing_jitter_ms: int = Field(default=0, ge=0, le=MAX_MS)
    # at-least-once: commit at most this often (Kafka Streams' commit.interval.ms); 0 = after
    # every batch. Exactly-once commits the offsets in each batch's transaction.
    commit_interval_ms: int = Field(default=0, ge=0, le=MAX_MS)
    config: Settings = {}  # the members' consumer settings (librdkafka)
    producer_config: Settings = {}  # their output producer's

    def member_transactional_id(self, index: int) -> str:
        return f"{self.transactional_id}-{index}"


# What the harness sets in a command member's environment (`env` may not set them).
COMMAND_ENV = (
    "KAFKA_BOOTSTRAP_SERVERS",
    "INPUT_TOPIC",
    "OUTPUT_TOPIC",
    "GROUP_ID",
    "TRANSACTIONAL_ID",
    "MEMBER_INDEX",
    "STATE_DIR",
)
Arg = Annotated[str, StringConstraints(min_length=1)]
EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]


class CommandPipelineSpec(StrictModel):
    """A user's own program as the pipeline: `members` processes of `command` (an argv, no
    shell), each told where to read and write by its environment (COMMAND_ENV). The harness
    cannot see what it consumed, only what it wrote: each output record must carry its input
    record's value (docs/your-pipeline.md). `guarantee` is what the user claims; the
    expectations say what it allows. Its members are the consumer set "pipeline"."""

    kind: Literal["command"] = "command"
    command: Annotated[list[Arg], Field(min_length=1)]
    # Relative to the experiment file's folder (harness.spec.load resolves it), or absolute.
    cwd: str | None = None
    env: dict[EnvName, str] = {}
    input: Name | None = None  # the spec's topic
    output: Name = "chaos-out"
    guarantee: Literal["exactly-once", "at-least-once"] = "at-least-once"
    members: int = Field(default=1, ge=1, le=MAX_MEMBERS)
    group: Annotated[str, StringConstraints(min_length=1)] = "chaos-pipeline"
    # TRANSACTIONAL_ID of member i: "<transactional_id>-<i>" (the program may ignore it).
    transactional_id: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._-]+$")] = (
        "chaos-pipeline"
    )

    def member_transactional_id(self, index: int) -> str:
        return f"{self.transactional_id}-{index}"

    def member_path(self, harness_path: str, python_dir: str) -> str:
        """The PATH a member's program runs with (and `command[0]` is looked up on): this
        Python's folder first (`python` is the harness's interpreter), then `env`'s PATH if
        it sets one, else the harness's own."""
        path = self.env.get("PATH", harness_path)
        return python_dir + (os.pathsep + path if path else "")


# `pipeline:` takes either kind; without `kind` it is a transform (as before `command`).
PipelineKindSpec = PipelineSpec | CommandPipelineSpec
PIPELINE_MODELS: tuple[type[PipelineKindSpec], ...] = get_args(PipelineKindSpec)


# The kinds `consumer:` / `consumers:` take, in the order errors list them; the first is
# what a set without `kind` is. A new kind is a model here plus its entry in
# harness.workload.consumer_kinds.
ConsumerSetSpec = GroupConsumerSpec | SparkConsumerSpec | ShareConsumerSpec
SET_MODELS: tuple[type[ConsumerSetSpec], ...] = get_args(ConsumerSetSpec)


def kind_word(model: type[StrictModel]) -> str:
    """A model's kind word: its `kind` field's default (the discriminated union's tag)."""
    return str(model.model_fields["kind"].default)


def _tagged_union(models: tuple[type[StrictModel], ...], error_type: str) -> tuple[Any, str]:
    """The union of `models` discriminated on their kind words (the first is what a value
    without `kind` is), and its error for any other kind."""
    tags = tuple(kind_word(m) for m in models)
    error = f"expected kind {' or '.join(tags)}"

    def tag(value: Any) -> str:
        kind = (
            value.get("kind", tags[0]) if isinstance(value, dict) else getattr(value, "kind", None)
        )
        return kind if kind in tags else "invalid"

    members = tuple(Annotated[m, Tag(t)] for m, t in zip(models, tags, strict=True))
    union: Any = Annotated[
        Union[members],  # noqa: UP007
        Discriminator(tag, custom_error_type=error_type, custom_error_message=error),
    ]
    return union, error


CONSUMER_TAGS: tuple[str, ...] = tuple(kind_word(m) for m in SET_MODELS)
PIPELINE_TAGS: tuple[str, ...] = tuple(kind_word(m) for m in PIPELINE_MODELS)
_CONSUMER_UNION, CONSUMER_KIND_ERROR = _tagged_union(SET_MODELS, "consumer_kind")
_PIPELINE_UNION, PIPELINE_KIND_ERROR = _tagged_union(PIPELINE_MODELS, "pipeline_kind")

if TYPE_CHECKING:
    ConsumerSpec = ConsumerSetSpec
    AnyPipelineSpec = PipelineKindSpec
else:  # each model tagged with its kind word
    ConsumerSpec = _CONSUMER_UNION
    AnyPipelineSpec = _PIPELINE_UNION
