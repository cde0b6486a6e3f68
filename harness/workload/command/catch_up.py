"""Has a command pipeline's output caught up with its input? The drain's question, asked of
the topics themselves: the harness cannot see what a user's program consumed.

Caught up means every input record (read_committed, up to the input's end offsets) has its
seq in the visible output (read_committed); or, for a program that drops records, that the
program's group has committed the input's end offsets and the output has stopped growing
(its end offsets unchanged since the previous question), so the missing ones are the
program's loss, not its backlog. A program that neither commits to its group nor copies
every record never catches up: the drain times out and its figures are undecided.

Both topics are read incrementally, each question reading only what is new, within a time
budget (the drain asks again a second later).
"""

from __future__ import annotations

import time
import uuid

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, TopicPartition

from harness.common.client_log import CLIENT_LOGGER
from harness.workload.records import decode_seq

READ_BUDGET_S = 5.0  # per question and topic: the drain asks again a second later
TIMEOUT_S = 10.0


class TopicTail:
    """A read_committed reader of every partition of one topic, from its start."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.bootstrap = bootstrap
        self.topic = topic
        self.consumer: Consumer | None = None
        self.assigned: set[int] = set()
        self.position: dict[int, int] = {}  # partition -> the next offset to read

    def _open(self) -> Consumer:
        if self.consumer is None:
            self.consumer = Consumer(
                _config(self.bootstrap, f"kafka-chaos-catchup-{uuid.uuid4().hex[:8]}")
            )
        return self.consumer

    def read(self, ends: dict[int, int]) -> list[tuple[int, int, int]]:
        """(partition, offset, seq) of the records that are new since the last read, read
        until every partition's position reaches `ends` (or the time budget is spent)."""
        consumer = self._open()
        new = [p for p in ends if p not in self.assigned]
        if new:
            consumer.incremental_assign(
                [TopicPartition(self.topic, p, OFFSET_BEGINNING) for p in new]
            )
            self.assigned.update(new)
        out: list[tuple[int, int, int]] = []
        deadline = time.monotonic() + READ_BUDGET_S
        while self.behind(ends) and time.monotonic() < deadline:
            for msg in consumer.consume(1000, timeout=0.2):
                err, part, off = msg.error(), msg.partition(), msg.offset()
                if part is None or off is None:
                    continue
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:  # past markers and aborts
                        self.position[part] = max(self.position.get(part, 0), off)
                    continue
                self.position[part] = max(self.position.get(part, 0), off + 1)
                seq = decode_seq(msg.value())
                if seq is not None:
                    out.append((part, off, seq))
        return out

    def behind(self, ends: dict[int, int]) -> dict[int, int]:
        """Records per partition between the position and `ends` (partitions behind only)."""
        lag = {p: end - self.position.get(p, 0) for p, end in ends.items()}
        return {p: n for p, n in lag.items() if n > 0}

    def ends(self, partitions: int) -> dict[int, int]:
        """High watermark of each of the topic's first `partitions` partitions."""
        consumer = self._open()
        return {
            p: consumer.get_watermark_offsets(TopicPartition(self.topic, p), timeout=TIMEOUT_S)[1]
            for p in range(partitions)
        }

    def close(self) -> None:
        if self.consumer is not None:
            self.consumer.close()
            self.consumer = None


class CatchUp:
    def __init__(self, bootstrap: str, input_topic: str, output_topic: str, group: str) -> None:
        self.bootstrap = bootstrap
        self.input = TopicTail(bootstrap, input_topic)
        self.output = TopicTail(bootstrap, output_topic)
        self.group = group
        self.seen: set[int] = set()  # seqs the visible output holds
        self.wanted: dict[int, int] = {}  # input seq not yet in the output -> its partition
        self.output_ends: dict[int, int] | None = None

    def lag(self, ends: dict[int, int]) -> dict[int, int]:
        """Per input partition: input records whose seq the output lacks, plus those not read
        yet; all 0 once caught up (see the module's docstring). Every partition at its end
        offset when the topics cannot be read (brokers still settling)."""
        try:
            return self._lag(ends)
        except KafkaException:
            return dict(ends)

    def _lag(self, ends: dict[int, int]) -> dict[int, int]:
        output_ends = self.output.ends(max(ends, default=-1) + 1)  # the output has the input's
        for _, _, seq in self.output.read(output_ends):
            self.seen.add(seq)
            self.wanted.pop(seq, None)
        for part, _, seq in self.input.read(ends):
            if seq not in self.seen:
                self.wanted[seq] = part
        lag = self.input.behind(ends)
        for part in self.wanted.values():
            lag[part] = lag.get(part, 0) + 1
        quiet, self.output_ends = output_ends == self.output_ends, output_ends
        if lag and not self.input.behind(ends) and quiet and self._committed_to(ends):
            lag = {}  # what is missing now, the program dropped: its group is past it
        return {p: lag.get(p, 0) for p in ends}

    def _committed_to(self, ends: dict[int, int]) -> bool:
        """Whether the program's group has committed every input partition's end offset."""
        consumer = Consumer(_config(self.bootstrap, self.group))
        try:
            found = consumer.committed(
                [TopicPartition(self.input.topic, p) for p in ends], timeout=TIMEOUT_S
            )
        finally:
            consumer.close()
        return all(tp.error is None and tp.offset >= ends[tp.partition] for tp in found)

    def close(self) -> None:
        self.input.close()
        self.output.close()


def _config(bootstrap: str, group: str) -> dict[str, object]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "enable.partition.eof": True,
        "isolation.level": "read_committed",
        "logger": CLIENT_LOGGER,
    }
