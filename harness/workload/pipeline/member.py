"""One member of a consume-transform-produce pipeline, run as its own process (SIGKILLable).

`python -m harness.workload.pipeline.member --spec PIPELINE_SPEC_JSON --runtime RUNTIME_JSON
--consumer pipeline/m0` (harness.workload.member_process); member i's transactional.id is
the spec's `member_transactional_id(i)`.

It is a group member of the input topic (its `consumed` lines are what it processed) that
writes every record it reads to the output topic, into the input record's partition, as
`records.encode_output_value` (the seq, then the input partition and offset).

- `exactly-once`: per polled batch, one transaction holds the output records and the input
  offsets (`send_offsets_to_transaction` with the group's metadata, KIP-447). librdkafka's
  errors as its docs say: retriable → the call again (bounded); abortable → abort; fatal or
  retries spent → a new producer (its init_transactions fences this one and ends the open
  transaction). After an abort or a new producer the member rewinds to the group's committed
  offsets, so the batch is processed again (KAFKA-17582: a consumer that does not rewind
  skips the aborted records). Each error and rewind is an event.
- `at-least-once`: produce the batch, flush, and only when every record was delivered
  write `consumed`; commit synchronously after the batch, or with `commit_interval_ms` once
  that long has passed since the last commit (and for revoked partitions before they go); a
  failed delivery rewinds instead. A crash between the delivery and the commit writes what
  was delivered since the last commit again: duplicates in the output.
"""

from __future__ import annotations

import contextlib
import faulthandler
import sys
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)

from harness.results import events as ev
from harness.results.member_files import PendingBatch, committed_past, not_yet_consumed
from harness.spec.consumers import PipelineSpec
from harness.workload.group.member import GroupMember
from harness.workload.member_process import member_index, parse_member_args, run_until_signalled
from harness.workload.pipeline.commit_interval import UncommittedOffsets
from harness.workload.records import decode_seq, encode_output_value
from harness.workload.runtime import Runtime

EXACTLY_ONCE, AT_LEAST_ONCE = "exactly-once", "at-least-once"
TXN_CALL_TIMEOUT_S = 30.0
TXN_CALL_ATTEMPTS = 3  # retriable errors: the call again, this many times in all
FLUSH_TIMEOUT_S = 60.0
REWIND_TIMEOUT_S = 120.0  # the group's committed offsets: asked again until this
SEEK_ATTEMPTS = 10  # a refused seek, tried again every 0.5 s
# A batch still in hand after this long (a call's retries, or a call that ignored its
# timeout) dumps the member's stacks to stderr.log, again every as long: where it waits.
HANG_DUMP_S = 2 * TXN_CALL_TIMEOUT_S


class TxnBroken(Exception):
    """The transaction cannot commit; `action` says what the member does (abort | reinit)."""

    def __init__(self, action: str) -> None:
        super().__init__(action)
        self.action = action


class PipelineMember(GroupMember):
    def __init__(self, spec: PipelineSpec, runtime: Runtime, name: str) -> None:
        # Its own commits come after the output is delivered (at-least-once), or inside
        # the transaction (exactly-once): never librdkafka's auto-commit.
        super().__init__(spec, runtime, name, commit="after-process")
        self.pipeline = spec
        self.transactional_id = spec.member_transactional_id(member_index(name))
        self.exactly_once = spec.guarantee == EXACTLY_ONCE
        self.undelivered: list[str] = []  # delivery errors of the batch in hand
        self.pending = PendingBatch(self.paths.pending)
        self.uncommitted = UncommittedOffsets(spec.commit_interval_ms, time.monotonic())
        self.producer = self.new_producer()  # completes or aborts what a killed process left

    # --- the output producer ----------------------------------------------------------------
    def producer_config(self) -> dict[str, Any]:
        conf: dict[str, Any] = {
            "linger.ms": 5,
            **self.pipeline.producer_config,
            "bootstrap.servers": self.runtime.bootstrap,
            "client.id": f"{self.name}/out",
            "acks": "all",
            "enable.idempotence": True,
        }
        if self.exactly_once:
            conf["transactional.id"] = self.transactional_id
            conf["transaction.timeout.ms"] = self.pipeline.timeout_ms
            conf.setdefault("message.timeout.ms", self.pipeline.timeout_ms)
        return conf

    def new_producer(self) -> Producer:
        """A producer; transactional: initialised, which fences an older one of the same id.
        The coordinator may be down (a fault): try again until max_s runs out."""
        deadline = time.monotonic() + self.runtime.max_s
        while True:
            producer = Producer(self.producer_config())
            if not self.exactly_once:
                return producer
            try:
                self.call("init_transactions", _init(producer))
                return producer
            except TxnBroken:
                if self.stopping or time.monotonic() > deadline:
                    raise
                time.sleep(1)

    def on_delivery(self, err: KafkaError | None, msg: Message) -> None:
        if err is not None:
            self.undelivered.append(err.str())

    def produce_batch(self, batch: list[Message]) -> None:
        for msg in batch:
            seq, part, offset = decode_seq(msg.value()), msg.partition(), msg.offset()
            if seq is None or part is None or offset is None:
                continue
            value = encode_output_value(seq, part, offset, len(msg.value() or b""))
            while True:
                try:
                    self.producer.produce(
                        self.pipeline.output,
                        value=value,
                        key=msg.key(),
                        partition=part,
                        on_delivery=self.on_delivery,
                    )
                    break
                except BufferError:
                    self.producer.poll(0.1)  # the queue is full: let deliveries drain it
        self.producer.poll(0)

    # --- librdkafka's transactional errors ----------------------------------------------------
    def call(self, name: str, fn: Callable[[], object]) -> None:
        for attempt in range(1, TXN_CALL_ATTEMPTS + 1):
            try:
                fn()
                return
            except KafkaException as exc:
                err: KafkaError = exc.args[0]
                if err.fatal():
                    action = "reinit"
                elif err.txn_requires_abort() and name != "abort_transaction":
                    action = "abort"
                elif err.retriable() and attempt < TXN_CALL_ATTEMPTS:
                    action = "retry"
                else:
                    action = "reinit"
                self.txn_error(name, err.str(), err.name(), action, err)
                if action != "retry":
                    raise TxnBroken(action) from exc

    def txn_error(
        self, call: str, error: str, code: str, action: str, err: KafkaError | None = None
    ) -> None:
        self.event(
            ev.PIPELINE_TXN_ERROR,
            call=call,
            error=error,
            code=code,
            retriable=None if err is None else err.retriable(),
            abortable=None if err is None else err.txn_requires_abort(),
            fatal=None if err is None else err.fatal(),
            action=action,
            generation=self.generation,
        )

    # --- one batch --------------------------------------------------------------------------
    def handle(self, consumer: Consumer, batch: list[Message]) -> None:
        # A batch that outlives every timeout its calls were given leaves each thread's
        # stack in stderr.log: librdkafka's send_offsets_to_transaction can block past its
        # timeout when the group coordinator moves (librdkafka #5456, #5511).
        faulthandler.dump_traceback_later(HANG_DUMP_S, repeat=True)
        try:
            self.work()
            if self.exactly_once:
                self.transact(consumer, batch)
            else:
                self.deliver_then_commit(consumer, batch)
        finally:
            faulthandler.cancel_dump_traceback_later()

    def transact(self, consumer: Consumer, batch: list[Message]) -> None:
        producer = self.producer
        offsets: list[TopicPartition] = []  # none yet: nothing of the batch can be committed
        try:
            self.call("begin_transaction", producer.begin_transaction)
            self.produce_batch(batch)
            offsets = self.next_offsets(batch)
            meta = consumer.consumer_group_metadata()
            self.call(
                "send_offsets_to_transaction",
                lambda: producer.send_offsets_to_transaction(offsets, meta, TXN_CALL_TIMEOUT_S),
            )
            # A SIGKILL after the commit lands and before `consumed` has the lines would leave
            # records the group committed that no line shows: they wait here (starting()).
            self.pending.write(self.lines(batch))
            self.call("commit_transaction", lambda: producer.commit_transaction(TXN_CALL_TIMEOUT_S))
        except TxnBroken as broken:
            if broken.action == "abort":
                try:
                    self.call(
                        "abort_transaction", lambda: producer.abort_transaction(TXN_CALL_TIMEOUT_S)
                    )
                except TxnBroken:
                    self.reinit()
            else:
                self.reinit()
            # A new producer may have completed the commit the old one could not confirm:
            # then the group's offsets are past the batch, and it was processed after all.
            # Asked for the batch's own partitions, not the assignment: a member that spent
            # max.poll.interval.ms in the calls has lost its partitions, not its commit.
            done = bool(offsets) and self.batch_committed(consumer, offsets)
            self.rewind(consumer)
            if done:
                self.process(batch)
            self.pending.clear()
            return
        # Processed once committed: the drain reads progress from these lines, and an
        # aborted batch is read and written again.
        self.process(batch)
        self.pending.clear()

    def reinit(self) -> None:
        """A new producer with the same transactional.id: the open transaction ends (committed
        if the coordinator already had the commit, else aborted) and the old client is fenced."""
        with contextlib.suppress(KafkaException):
            self.producer.flush(0)
        self.producer = self.new_producer()

    def deliver_then_commit(self, consumer: Consumer, batch: list[Message]) -> None:
        self.undelivered = []
        self.produce_batch(batch)
        left = self.producer.flush(FLUSH_TIMEOUT_S)
        if left or self.undelivered:
            first = self.undelivered[0] if self.undelivered else f"{left} still queued"
            self.txn_error("flush", first, "delivery", "rewind")
            self.rewind(consumer)
            return
        self.process(batch)
        self.uncommitted.add({tp.partition: tp.offset for tp in self.next_offsets(batch)})
        if self.uncommitted.due(time.monotonic()):
            self.commit_uncommitted(consumer)

    def commit_uncommitted(
        self, consumer: Consumer, partitions: list[int] | None = None, keep_failed: bool = True
    ) -> None:
        """Commit what was delivered and not yet committed (of these partitions, all if None);
        what a failed commit held waits for the next, unless `keep_failed` is False."""
        offsets = self.uncommitted.take(partitions)
        if not offsets:
            return
        listed = [TopicPartition(self.runtime.topic, p, o) for p, o in offsets.items()]
        if self.commit_offsets(consumer, listed):
            self.uncommitted.committed(time.monotonic())
        elif keep_failed:
            self.uncommitted.restore(offsets)

    def on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        # As Kafka Streams does: what was delivered is committed before its partitions go
        # (a rebalance, or close() on SIGTERM), and forgotten either way: no longer ours.
        # A SIGKILL commits nothing.
        if not self.exactly_once:
            revoked = [tp.partition for tp in partitions]
            self.commit_uncommitted(consumer, revoked, keep_failed=False)
        super().on_revoke(consumer, partitions)

    def committed(
        self, consumer: Consumer, partitions: list[TopicPartition]
    ) -> list[TopicPartition]:
        """The group's committed offsets of these partitions, asked again for up to
        REWIND_TIMEOUT_S (the coordinator may be moving); the last KafkaException if never."""
        deadline = time.monotonic() + REWIND_TIMEOUT_S
        while True:
            try:
                return list(consumer.committed(partitions, timeout=10))
            except KafkaException:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)

    def batch_committed(self, consumer: Consumer, offsets: list[TopicPartition]) -> bool:
        """Whether the group's committed offsets are at or past the batch's next offsets.
        Unanswerable: the process ends with the batch still pending, for the next one."""
        asked = [TopicPartition(tp.topic, tp.partition) for tp in offsets]
        try:
            found = {tp.partition: tp.offset for tp in self.committed(consumer, asked)}
        except KafkaException as exc:
            self.txn_error("committed", str(exc.args[0]), "rewind", "exit")
            raise SystemExit(3) from exc
        return all(found.get(tp.partition, -1) >= tp.offset for tp in offsets)

    def starting(self, consumer: Consumer) -> None:
        """Resolve the batch a SIGKILLed process of this member left pending (see transact):
        the new producer has completed or aborted its transaction, so the group's committed
        offsets now say which."""
        left = self.pending.read()
        if not left:
            self.pending.clear()
            return
        topic = self.runtime.topic
        parts = sorted({line.partition for line in left})
        try:
            found = self.committed(consumer, [TopicPartition(topic, p) for p in parts])
        except KafkaException as exc:
            self.event(ev.PIPELINE_PENDING, records=len(left), error=str(exc.args[0]))
            self.pending.clear()
            return
        done = committed_past(left, {tp.partition: tp.offset for tp in found})
        if done:
            self.write_consumed([ln.csv() for ln in not_yet_consumed(self.paths.consumed, left)])
        self.event(ev.PIPELINE_PENDING, records=len(left), committed=done)
        self.pending.clear()

    def rewind(self, consumer: Consumer) -> dict[int, int]:
        """Seek every assigned partition back to the group's committed offset (the start when
        none): what was not committed is read and written again."""
        try:
            committed = self.committed(consumer, consumer.assignment())
        except KafkaException as exc:
            # No safe position to go on from: end the process (the runner restarts it at
            # heal; the group hands its partitions to the others meanwhile).
            self.txn_error("committed", str(exc.args[0]), "rewind", "exit")
            raise SystemExit(3) from exc
        seeks: dict[int, int] = {}
        for tp in committed:
            offset = tp.offset if tp.offset >= 0 else OFFSET_BEGINNING
            error = self.seek(consumer, TopicPartition(self.runtime.topic, tp.partition, offset))
            if error is None:
                seeks[tp.partition] = offset
            elif any(a.partition == tp.partition for a in consumer.assignment()):
                # Still ours but not rewound: going on would skip the batch (KAFKA-17582).
                self.txn_error("seek", error, "rewind", "exit")
                raise SystemExit(3)
        self.event(ev.PIPELINE_REWIND, generation=self.generation, partitions=seeks)
        return seeks

    def seek(self, consumer: Consumer, to: TopicPartition) -> str | None:
        """Seek, tried again for a few seconds (a partition whose fetcher is still starting
        refuses it); the last error when it never took, None when it did."""
        error = ""
        for _ in range(SEEK_ATTEMPTS):
            try:
                consumer.seek(to)
                return None
            except KafkaException as exc:
                error = str(exc.args[0])
                time.sleep(0.5)
        return error

    def start_fields(self) -> dict[str, Any]:
        return {"guarantee": self.pipeline.guarantee, "output": self.pipeline.output}

    def closing(self) -> None:
        with contextlib.suppress(KafkaException):
            self.producer.flush(10)


def _init(producer: Producer) -> Callable[[], object]:
    return lambda: producer.init_transactions(TXN_CALL_TIMEOUT_S)


def main(argv: list[str] | None = None) -> None:
    args = parse_member_args(PipelineSpec, sys.argv[1:] if argv is None else argv, __doc__)
    member = PipelineMember(args.spec, args.runtime, args.name)
    run_until_signalled(member, member.run)


if __name__ == "__main__":
    main()
