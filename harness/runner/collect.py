"""The collect phase: everything a cell leaves for the checks, written into its folder.

The ledger, the consumers' records and commits (streamed from the members' files), Kafka's
metrics, the final reads of the input topic and the pipeline's output (read_uncommitted,
then read_committed when transactions wrote them), and broker forensics: every broker's
copy of the workload topics, decoded into the segment tables (`decode`, which the runner may
run behind the next cell). Whatever fails is recorded and the rest still written;
`tables.written` lists what was.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from harness.cluster.kafka_cluster import KafkaCluster
from harness.cluster.segment_capture import SegmentCapture
from harness.results import events as ev
from harness.results.history import History
from harness.results.layout import CellPaths
from harness.results.tables import (
    COMMITS,
    CONSUMED,
    LOG,
    OUTPUT,
    SHARE,
    counted,
    write_table,
    write_tables,
)
from harness.runner.segment_tables import decode_captures
from harness.spec import CommandPipelineSpec, Spec
from harness.workload.consumer_sets import ConsumerSets
from harness.workload.log_reader import LogContents, copied_from, read_log
from harness.workload.producer.supervisor import ProducerSupervisor
from harness.workload.producer.thread import ProducerThread


class Collector:
    """One cell's collect phase, and the segment copies taken before it (broker forensics)."""

    def __init__(self, spec: Spec, paths: CellPaths, history: History) -> None:
        self.spec = spec
        self.paths = paths
        self.history = history
        self.capture: SegmentCapture | None = None  # broker forensics' copies (a real cluster)
        self._input: LogContents | None = None  # the final read of the input (read_uncommitted)
        self._undecoded = False  # final copies taken, not yet decoded

    def attach(self, cluster: KafkaCluster) -> None:
        """Broker forensics: brokers' copies of the workload topics (and the pipeline's
        output), taken before a broker rejoins and at collect (a real cluster only)."""
        if not isinstance(cluster, KafkaCluster):
            return
        topics = {self.spec.topic.name: self.spec.topic.partitions}
        if self.spec.pipeline is not None:
            topics[self.spec.pipeline.output] = self.spec.topic.partitions
        self.capture = SegmentCapture(self.paths.segment_copies, lambda: topics, self.history)
        cluster.segment_capture = self.capture

    def collect(
        self,
        cluster: KafkaCluster,
        producer: ProducerThread | ProducerSupervisor,
        consumers: ConsumerSets,
        write_metrics: Callable[[], int | None],
        with_log: bool = True,
    ) -> None:
        written: dict[str, Any] = {"ledger": producer.write(self.paths.ledger)}
        # Streamed from the members' files: a long run's records are never all in memory.
        by_consumer: Counter[str] = Counter()
        consumed = counted(consumers.consumed_tables(), by_consumer)
        written["consumed"] = write_tables(self.paths.consumed, CONSUMED, consumed)
        written["consumed_by"] = dict(sorted(by_consumer.items()))
        written["commits"] = write_tables(self.paths.commits, COMMITS, consumers.commits_tables())
        if consumers.share_sets():
            written["share"] = write_tables(self.paths.share, SHARE, consumers.share_tables())
        metrics = write_metrics()
        if metrics is not None:
            written["metrics"] = metrics
        consumers.merge_events()
        copying: Future[None] | None = None
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="collect-copies")
        try:
            if not with_log:
                self.history.append("log.read", complete=False, records=0, detail="interrupted")
                return
            if self.capture is not None:
                # Every broker's final copy, taken while the final reads run (neither changes
                # the logs; each waits mostly on its own stream): decoded by decode().
                copying = pool.submit(self.capture.capture_all, cluster.broker_nodes)
            try:
                written["log"] = self._read_log(cluster)
            except Exception as exc:
                self.history.append(
                    "log.read", complete=False, records=0, detail=f"{type(exc).__name__}: {exc}"
                )
            if self.spec.pipeline is not None:
                try:
                    written["output"] = self._read_output(cluster, self.spec.pipeline.output)
                except Exception as exc:
                    self.history.append(
                        ev.OUTPUT_READ,
                        complete=False,
                        records=0,
                        detail=f"{type(exc).__name__}: {exc}",
                    )
            if copying is not None:
                copying.result()
                self._undecoded = True
        finally:
            pool.shutdown(wait=True)
            self.history.append(ev.TABLES_WRITTEN, **written)

    def decode(self, cluster: KafkaCluster) -> None:
        """Every copy the collect left, decoded into the segment tables (once). Needs no
        running broker, only the cell's image: it may run behind the next cell."""
        capture = self.capture
        if capture is None or not self._undecoded:
            return
        self._undecoded = False
        decode_captures(
            capture.captures,
            self.paths.segment_copies,
            self.paths.segments,
            self.paths.segment_logs,
            cluster.version,  # after an upgrade: the version the nodes run now
            cluster.run_id,
            self.history,
            keep=self.spec.recovery.keep_segments,
        )

    def _final_read(
        self, cluster: KafkaCluster, topic: str, isolation: str, kind: str, output: bool = False
    ) -> LogContents:
        """One final read of a topic (every partition it has now, the spec's at least),
        recorded as a `kind` event (log.read for the input, output.read for the output)."""
        contents = read_log(
            cluster.bootstrap_servers,
            topic,
            at_least=self.spec.topic.partitions,
            timeout_s=self.spec.recovery.drain_timeout_s,
            isolation=isolation,
            origin=output,
        )
        self.history.append(
            kind,
            **({"topic": topic} if output else {}),
            complete=contents.complete,
            records=len(contents.seq),
            ends=contents.ends,
            detail=contents.detail,
            isolation=isolation,
        )
        return contents

    def _read_both(
        self, cluster: KafkaCluster, topic: str, kind: str, output: bool = False
    ) -> tuple[LogContents, list[bool | None]]:
        """Every record (read_uncommitted), then what read_committed sees: each record's
        `committed` flag. Without transactions (an input no transactional producer wrote)
        the second read is left out and the flags are null (= visible)."""
        everything = self._final_read(cluster, topic, ev.READ_UNCOMMITTED, kind, output)
        if not output and self.spec.producer.transactions is None:
            return everything, [None] * len(everything.seq)
        visible = self._final_read(cluster, topic, ev.READ_COMMITTED, kind, output)
        seen = set(zip(visible.partition, visible.offset, strict=True))
        places = zip(everything.partition, everything.offset, strict=True)
        return everything, [(p, o) in seen for p, o in places]

    def _read_log(self, cluster: KafkaCluster) -> int:
        """The final read of the input topic into log.parquet; its rows."""
        log, committed = self._read_both(cluster, self.spec.topic.name, ev.LOG_READ)
        self._input = log
        return write_table(
            self.paths.log,
            LOG,
            {
                "seq": log.seq,
                "partition": log.partition,
                "offset": log.offset,
                "committed": committed,
            },
        )

    def _read_output(self, cluster: KafkaCluster, topic: str) -> int:
        """The pipeline's output topic, read as the input is, into output.parquet (with the
        input place each record names, or for a command pipeline the place of the input
        record whose value it copies); its rows."""
        out, committed = self._read_both(cluster, topic, ev.OUTPUT_READ, output=True)
        if isinstance(self.spec.pipeline, CommandPipelineSpec):
            # A user's program copies the input value: its place is looked up in the input.
            out.input_partition, out.input_offset = copied_from(out, self._input)
        return write_table(
            self.paths.output,
            OUTPUT,
            {
                "seq": out.seq,
                "partition": out.partition,
                "offset": out.offset,
                "committed": committed,
                "input_partition": out.input_partition,
                "input_offset": out.input_offset,
            },
        )
