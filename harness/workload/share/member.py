"""One share-group member (KIP-932), run as its own process so the nemesis can SIGKILL it.

`python -m harness.workload.share.member --spec SHARE_CONSUMER_SPEC_JSON --runtime
RUNTIME_JSON --consumer share/m0` (harness.workload.member_process)

Each poll's records are "processed" as a group member's are (the spec's processing_ms of
sleep, plus seeded jitter), then answered. What the member writes, and when:
- `share.csv` (harness.results.member_files.ShareLine): every delivery as it is polled
  (with the broker's delivery count), and every acknowledgement once the broker answered
  it (the acknowledgement-commit callback: taken, or the error it was refused with);
- `consumed.csv`: a record it processed and is about to ACCEPT, written before the ACCEPT
  is sent, as a group member writes before it commits: a SIGKILL between the two leaves a
  record processed whose ACCEPT the broker may never have had (it comes back: redelivered,
  not lost). RELEASEd and REJECTed records are handed back, not consumed.
`explicit`: each record gets ShareConsumerSpec.answer(seq), then commit_async (its answer
comes back through the callback on a later poll). `implicit`: the client ACCEPTs a poll's
records on the next poll. SIGTERM closes cleanly (close() sends what is pending and leaves
the group); it also stops by itself after the runtime's max_s.
"""

from __future__ import annotations

import os
import random
import sys
import time
from typing import Any

from confluent_kafka import (
    AcknowledgeType,
    KafkaException,
    Message,
    ShareConsumer,
    TopicPartition,
)

from harness.results import events as ev
from harness.results.history import now_ms
from harness.results.member_files import (
    ACKED,
    DELIVERED,
    ConsumedLine,
    EventLog,
    MemberPaths,
    ShareLine,
    open_for_append,
)
from harness.spec.consumers import KAFKA_LOCK_MS, ShareConsumerSpec
from harness.workload.member_process import (
    parse_member_args,
    run_until_signalled,
    simulated_work,
)
from harness.workload.records import decode_seq
from harness.workload.runtime import Runtime

DEFAULT_DELIVERY_LIMIT = 5  # Kafka's group.share.delivery.count.limit
ACK_TYPES = {
    "accept": AcknowledgeType.ACCEPT,
    "release": AcknowledgeType.RELEASE,
    "reject": AcknowledgeType.REJECT,
}


def start_fields(spec: ShareConsumerSpec) -> dict[str, Any]:
    """What a share member's consumer.start says besides pid (either client's)."""
    return {
        "isolation": str(spec.client_settings.get("isolation.level", "read_uncommitted")),
        "share_group": spec.group,
        "ack": spec.ack,
        "delivery_limit": spec.delivery_limit or DEFAULT_DELIVERY_LIMIT,
        "lock_ms": spec.lock_ms or KAFKA_LOCK_MS,
    }


def error_name(exc: BaseException | None) -> str:
    """The client's name of an acknowledgement's error ("" when the broker took it)."""
    if exc is None:
        return ""
    err = exc.args[0] if exc.args else None
    name = getattr(err, "name", None)
    return str(name()) if callable(name) else type(exc).__name__


class ShareMember:
    def __init__(self, spec: ShareConsumerSpec, runtime: Runtime, name: str) -> None:
        self.spec = spec
        self.runtime = runtime
        self.name = name
        self.stopping = False
        paths = MemberPaths(runtime.directory, name)
        self.consumed = open_for_append(paths.consumed)
        self.share = open_for_append(paths.share)
        self.event = EventLog(paths)
        # (partition, offset) -> (seq, answer): acknowledgements sent, not yet answered.
        self.sent: dict[tuple[int, int], tuple[int, str]] = {}
        self.rng = random.Random(f"{runtime.seed}/{name}")  # same seed, same work times

    def config(self) -> dict[str, Any]:
        return {
            **self.spec.client_settings,
            "bootstrap.servers": self.runtime.bootstrap,
            "group.id": self.spec.group,
            "client.id": self.name,
            "share.acknowledgement.mode": self.spec.ack,
        }

    def on_acks(self, offsets: dict[TopicPartition, set[int]], exc: BaseException | None) -> None:
        """The broker's answer to sent acknowledgements: one `acked` line each."""
        ts, error = now_ms(), error_name(exc)
        lines = []
        for tp, answered in offsets.items():
            partition = tp.partition
            for offset in sorted(answered):
                seq, answer = self.sent.pop((partition, offset), (-1, "accept"))
                lines.append(ShareLine(ACKED, seq, partition, offset, -1, answer, error, ts).csv())
        self.share.writelines(lines)
        self.share.flush()

    def deliveries(self, batch: list[Message]) -> list[tuple[Message, int]]:
        """The batch's records with their seqs (-1: not a workload record), each written as
        a `delivered` line: every one is answered, as explicit mode requires before the next
        poll."""
        ts = now_ms()
        out, lines = [], []
        for msg in batch:
            seq = decode_seq(msg.value())
            seq = -1 if seq is None else seq
            partition, offset = msg.partition() or 0, msg.offset() or 0
            count = msg.delivery_count() or 1
            lines.append(ShareLine(DELIVERED, seq, partition, offset, count, "", "", ts).csv())
            out.append((msg, seq))
        self.share.writelines(lines)
        self.share.flush()
        return out

    def work(self) -> None:
        """The simulated work on a batch (not interrupted by SIGTERM: a batch finishes)."""
        simulated_work(self.rng, self.spec.processing_ms, self.spec.processing_jitter_ms)

    def answer(self, consumer: ShareConsumer, records: list[tuple[Message, int]]) -> None:
        """Write the accepted ones as consumed, then acknowledge every record (explicit) or
        let the next poll accept them (implicit); a refused call is an event, not a crash."""
        ts = now_ms()
        answers = [
            (msg, seq, "accept" if self.spec.ack == "implicit" else self.spec.answer(seq))
            for msg, seq in records
        ]
        self.consumed.writelines(
            ConsumedLine(seq, msg.partition() or 0, msg.offset() or 0, ts, 0).csv()
            for msg, seq, answer in answers
            if answer == "accept" and seq >= 0
        )
        self.consumed.flush()
        for msg, seq, answer in answers:
            self.sent[(msg.partition() or 0, msg.offset() or 0)] = (seq, answer)
            if self.spec.ack == "explicit":
                try:
                    consumer.acknowledge(msg, ACK_TYPES[answer])
                except KafkaException as exc:
                    self.event(ev.CONSUMER_ERROR, error=f"acknowledge: {exc.args[0]}")
        if self.spec.ack == "explicit":
            try:
                consumer.commit_async()
            except KafkaException as exc:
                self.event(ev.CONSUMER_COMMIT_FAILED, error=str(exc.args[0]))

    def run(self) -> None:
        consumer = ShareConsumer(self.config())
        consumer.set_acknowledgement_commit_callback(self.on_acks)
        consumer.subscribe([self.runtime.topic])
        self.event(ev.CONSUMER_START, pid=os.getpid(), **start_fields(self.spec))
        deadline = time.monotonic() + self.runtime.max_s
        parent = os.getppid()
        try:
            # Bounded: stops at max_s, on SIGTERM, or when the runner that started it is gone.
            while not self.stopping and time.monotonic() < deadline and os.getppid() == parent:
                try:
                    messages = consumer.poll(0.5)
                except KafkaException as exc:
                    self.event(ev.CONSUMER_ERROR, error=str(exc.args[0]))
                    time.sleep(0.5)
                    continue
                batch = []
                for m in messages:
                    err = m.error()
                    if err is None:
                        batch.append(m)
                    else:
                        self.event(ev.CONSUMER_ERROR, error=str(err))
                records = self.deliveries(batch)
                if not records:
                    continue
                self.work()
                self.answer(consumer, records)
        finally:
            consumer.close()
            self.event(ev.CONSUMER_STOP, generation=0)


def main(argv: list[str] | None = None) -> None:
    args = parse_member_args(ShareConsumerSpec, sys.argv[1:] if argv is None else argv, __doc__)
    member = ShareMember(args.spec, args.runtime, args.name)
    run_until_signalled(member, member.run)


if __name__ == "__main__":
    main()
