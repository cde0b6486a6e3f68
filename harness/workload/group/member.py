"""One consumer-group member, run as its own process so the nemesis can SIGKILL it.

`python -m harness.workload.group.member --spec GROUP_CONSUMER_SPEC_JSON --runtime RUNTIME_JSON
--consumer group/m0` (harness.workload.member_process)

Each polled batch is "processed": the spec's processing_ms of simulated work (a sleep; plus a
uniform 0..processing_jitter_ms drawn from a generator seeded by the runtime's seed and the
member's name), then its records are written to `consumed` (the moment they count as
processed). Commit strategies, the spec's `commit` (what a crash then costs):
- `after-process`: work, write the batch, then commit it synchronously — a crash re-delivers
  at most the batch in hand (reprocessing, never loss);
- `before-process`: commit the batch, then work, then write it — a crash during the work
  skips the batch (loss: committed, never processed);
- `auto`: work, then write, while librdkafka auto-commits in the background (every 5 s by
  default, the offsets of what polls have returned).
SIGTERM stops it cleanly (close() leaves the group); it also stops by itself after the
runtime's max_s.
"""

from __future__ import annotations

import os
import random
import sys
import time
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition

from harness.results import events as ev
from harness.results.consumers import ConsumerRef
from harness.results.history import now_ms
from harness.results.member_files import (
    CommitLine,
    ConsumedLine,
    EventLog,
    MemberPaths,
    next_generation,
    open_for_append,
)
from harness.spec.consumers import GroupConsumerSpec, PipelineSpec
from harness.workload.member_process import (
    parse_member_args,
    run_until_signalled,
    simulated_work,
)
from harness.workload.records import decode_seq
from harness.workload.runtime import Runtime

BATCH = 500
METADATA_REFRESH_MS = 5000  # as the ledger producer's; the spec's config may override it


class GroupMember:
    """A group member of `spec`'s group; `commit` is its strategy (a pipeline member's
    spec has none: it commits after processing, or in its transaction)."""

    def __init__(
        self, spec: GroupConsumerSpec | PipelineSpec, runtime: Runtime, name: str, commit: str
    ) -> None:
        self.spec = spec
        self.runtime = runtime
        self.name = name
        self.commit_mode = commit
        self.paths = MemberPaths(runtime.directory, name)
        self.set_name = ConsumerRef.parse(name).set_name
        self.generation = 0
        self.stopping = False
        self.consumed = open_for_append(self.paths.consumed)
        self.commits = open_for_append(self.paths.commits)
        self.event = EventLog(self.paths)
        self.at_end: dict[int, int] = {}  # partition -> offset of its latest end-of-partition
        self.at_end_logged: dict[int, int] = {}
        self.rng = random.Random(f"{runtime.seed}/{name}")  # same seed, same work times

    def on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.generation = next_generation(self.runtime.directory, self.set_name)
        self.event(
            ev.CONSUMER_ASSIGN,
            generation=self.generation,
            partitions=sorted(p.partition for p in partitions),
        )

    def on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.event(
            ev.CONSUMER_REVOKE,
            generation=self.generation,
            partitions=sorted(p.partition for p in partitions),
        )

    def on_commit(self, err: KafkaError | None, partitions: list[TopicPartition]) -> None:
        if self.commit_mode != "auto":
            return  # synchronous commits are logged from their result (librdkafka reports both)
        if err is not None:
            self.event(ev.CONSUMER_COMMIT_FAILED, error=str(err))
            return
        self._log_commits(partitions)

    def _log_commits(self, partitions: list[TopicPartition]) -> None:
        ts = now_ms()
        for p in partitions:
            if p.error is None and p.offset >= 0:
                self.commits.write(CommitLine(p.partition, p.offset, ts).csv())
        self.commits.flush()

    def config(self) -> dict[str, Any]:
        auto = self.commit_mode == "auto"
        return {
            "auto.offset.reset": "earliest",
            # A member rejoins the group when its metadata shows the topic grown
            # (add-partitions); librdkafka refreshes it only every 5 min by default.
            "topic.metadata.refresh.interval.ms": METADATA_REFRESH_MS,
            **(
                self.spec.client_settings
                if isinstance(self.spec, GroupConsumerSpec)
                else self.spec.config
            ),
            "bootstrap.servers": self.runtime.bootstrap,
            "group.id": self.spec.group,
            "client.id": self.name,
            "enable.auto.commit": auto,
            "enable.partition.eof": True,  # see note_at_end
            "on_commit": self.on_commit,
        }

    def process(self, batch: list[Message]) -> None:
        self.write_consumed(self.lines(batch))

    def lines(self, batch: list[Message]) -> list[str]:
        """The batch's `consumed` lines, stamped now."""
        ts = now_ms()
        out = []
        for msg in batch:
            seq = decode_seq(msg.value())
            part, offset = msg.partition(), msg.offset()
            if seq is not None and part is not None and offset is not None:
                out.append(ConsumedLine(seq, part, offset, ts, self.generation).csv())
        return out

    def write_consumed(self, lines: list[str]) -> None:
        self.consumed.writelines(lines)
        self.consumed.flush()

    def work(self) -> None:
        """The simulated work on a batch (not interrupted by SIGTERM: a batch finishes)."""
        simulated_work(self.rng, self.spec.processing_ms, self.spec.processing_jitter_ms)

    def next_offsets(self, batch: list[Message]) -> list[TopicPartition]:
        """Per partition of the batch, the offset after its last record (what to commit)."""
        ends: dict[int, int] = {}
        for msg in batch:
            part, offset = msg.partition(), msg.offset()
            if part is not None and offset is not None:
                ends[part] = max(ends.get(part, -1), offset + 1)
        return [TopicPartition(self.runtime.topic, p, o) for p, o in sorted(ends.items())]

    def commit(self, consumer: Consumer, batch: list[Message]) -> None:
        """Commit the next offset of each partition in the batch; failures are events, not crashes."""
        self.commit_offsets(consumer, self.next_offsets(batch))

    def commit_offsets(self, consumer: Consumer, offsets: list[TopicPartition]) -> bool:
        """Commit synchronously; a failure is an event (and False), not a crash."""
        try:
            result = consumer.commit(offsets=offsets, asynchronous=False)
        except KafkaException as exc:
            self.event(ev.CONSUMER_COMMIT_FAILED, error=str(exc.args[0]))
            return False
        if result:
            self._log_commits(result)
        return True

    def note_at_end(self) -> None:
        """When idle, record the end offsets reached since the last note (if any changed).

        The drain needs them: a partition the group started at its end (auto.offset.reset
        =latest, e.g. one added during the run) yields no record to process, yet the group
        has reached it; what it skipped shows as lost_never_consumed. Only when idle, so a
        busy member writes none.
        """
        if self.at_end != self.at_end_logged:
            self.event(ev.CONSUMER_AT_END, generation=self.generation, ends=dict(self.at_end))
            self.at_end_logged = dict(self.at_end)

    def handle(self, consumer: Consumer, batch: list[Message]) -> None:
        """One polled batch: work, write, commit, in the order the commit strategy says."""
        if self.commit_mode == "before-process":
            self.commit(consumer, batch)
            self.work()
            self.process(batch)
        else:
            self.work()
            self.process(batch)
            if self.commit_mode == "after-process":
                self.commit(consumer, batch)

    def start_fields(self) -> dict[str, Any]:
        """Fields of this process's consumer.start event besides pid and isolation."""
        return {}

    def starting(self, consumer: Consumer) -> None:
        """Before the consumer subscribes (a pipeline member resolves its pending batch)."""

    def closing(self) -> None:
        """After the consumer closed (a pipeline member flushes its producer)."""

    def run(self) -> None:
        config = self.config()
        consumer = Consumer(config)
        self.starting(consumer)
        consumer.subscribe([self.runtime.topic], on_assign=self.on_assign, on_revoke=self.on_revoke)
        isolation = str(config.get("isolation.level", ev.READ_COMMITTED))  # librdkafka's default
        self.event(ev.CONSUMER_START, pid=os.getpid(), isolation=isolation, **self.start_fields())
        deadline = time.monotonic() + self.runtime.max_s
        parent = os.getppid()
        try:
            # Bounded: stops at max_s, on SIGTERM, or when the runner that started it is gone.
            while not self.stopping and time.monotonic() < deadline and os.getppid() == parent:
                messages = consumer.consume(BATCH, timeout=0.5)
                batch = [m for m in messages if m.error() is None]
                for m in messages:
                    err = m.error()
                    if err is not None and err.code() == KafkaError._PARTITION_EOF:
                        self.at_end[m.partition() or 0] = m.offset() or 0
                    elif err is not None:
                        self.event(ev.CONSUMER_ERROR, error=str(err))
                if not batch:
                    self.note_at_end()
                    continue
                self.handle(consumer, batch)
        finally:
            consumer.close()
            self.closing()
            self.event(ev.CONSUMER_STOP, generation=self.generation)


def main(argv: list[str] | None = None) -> None:
    args = parse_member_args(GroupConsumerSpec, sys.argv[1:] if argv is None else argv, __doc__)
    member = GroupMember(args.spec, args.runtime, args.name, commit=args.spec.commit)
    run_until_signalled(member, member.run)


if __name__ == "__main__":
    main()
