"""One cell of an experiment, phase by phase, into its result folder.

steady-state gate → workload + nemesis → heal all → recovery (bounded) → drain
(bounded) → collect (log, tables, broker logs, history). Checks come after, from
the folder alone (harness.experiment.verify_run), so `verify` can redo them. From the
topic's creation to the collect phase a watch records its leader and ISR changes.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.cluster.kafka_cluster import KafkaCluster
from harness.cluster.metrics_scraper import MetricsScraper
from harness.cluster.segment_capture import SegmentCapture
from harness.common.client_log import client_log_to
from harness.common.waiting import wait_until
from harness.errors import HarnessError, WaitTimeout
from harness.faults.producer import PRODUCER_TARGET
from harness.faults.registry import is_producer_fault
from harness.nemesis.nemesis import Nemesis
from harness.nemesis.schedule import PlannedFault
from harness.results import events as ev
from harness.results.history import History
from harness.results.layout import CellPaths
from harness.results.tables import (
    COMMITS,
    CONSUMED,
    LOG,
    OUTPUT,
    counted,
    write_table,
    write_tables,
)
from harness.runner.partition_watch import POLL_TIMEOUT_S, PartitionWatch
from harness.runner.segment_tables import decode_captures
from harness.runner.status import Reporter, Status, status_line
from harness.spec import Cell, CommandPipelineSpec
from harness.workload.clocks import ClientClocks
from harness.workload.consumer_sets import ConsumerSets
from harness.workload.log_reader import LogContents, copied_from, end_offsets, read_log
from harness.workload.producer.supervisor import ProducerSupervisor
from harness.workload.producer.thread import ProducerThread
from harness.workload.runtime import Runtime

STEADY_STATE_TIMEOUT_S = 90.0
ASSIGN_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Parts:
    """What a cell runs against, as factories: the real classes, or fakes in unit tests."""

    cluster: Callable[..., KafkaCluster] = KafkaCluster
    consumers: Callable[..., ConsumerSets] = ConsumerSets
    producer: Callable[..., ProducerThread] = ProducerThread
    producer_process: Callable[..., ProducerSupervisor] = ProducerSupervisor
    nemesis: Callable[..., Nemesis] = Nemesis
    partition_watch: Callable[..., PartitionWatch] = PartitionWatch
    metrics_scraper: Callable[..., MetricsScraper] = MetricsScraper


class CellRunner:
    def __init__(
        self,
        cell: Cell,
        plan: list[PlannedFault],
        seed: int,
        cell_dir: Path,
        run_id: str,
        report: Reporter,
        keep_cluster: bool = False,
        parts: Parts | None = None,
        checks_ready: Callable[[], None] | None = None,
    ) -> None:
        self.cell = cell
        self.parts = parts or Parts()
        self.spec = cell.spec
        self.plan = plan
        self.seed = seed
        self.dir = cell_dir
        self.paths = CellPaths(cell_dir)
        self.run_id = run_id
        self.report = report
        self.keep_cluster = keep_cluster
        # A run's: until the checks' Spark session is up and the previous cell's checks are
        # done (phase checks-wait, after the steady state), so that neither shares the machine
        # with a workload.
        self.checks_ready = checks_ready
        self.history = History()
        self.status = Status(cell.id)
        self.kept: KafkaCluster | None = None
        self._seen = 0
        self._input: LogContents | None = None  # the final read of the input (read_uncommitted)
        self._watch: PartitionWatch | None = None  # the topic's leaders and ISRs, once it exists
        self._scraper: MetricsScraper | None = None  # Kafka's own metrics, with cluster.metrics
        self._capture: SegmentCapture | None = None  # broker forensics' copies (a real cluster)
        # The client processes a planned clock-skew acts on, and their offset files.
        self.clocks = ClientClocks.of(cell_dir, self.spec.skewed_clients())

    # --- phases --------------------------------------------------------------------------------
    def phase(self, name: str, **fields: Any) -> None:
        self.history.append("phase", phase=name, **fields)
        self.status.phase = name
        self.report(self.status)

    def run(self) -> None:
        """Run the cell; whatever happens, the folder gets what was collected and the history."""
        self.dir.mkdir(parents=True, exist_ok=True)
        if self.spec.broker_logs.allow:  # the broker_logs check reads it from the history
            self.history.append(ev.BROKER_LOGS_ALLOW, allow=list(self.spec.broker_logs.allow))
        c = self.spec.cluster
        cluster = self.parts.cluster(
            c.mode,
            c.brokers,
            c.version,
            c.broker_config,
            controllers=c.controllers,
            spare_brokers=c.spare_brokers,
            link_proxies=self.spec.link_proxies,
            log_dirs=c.log_dirs,
            log_dir_size_mb=self.spec.log_dir_size_mb,
            fake_clock=self.spec.fake_clock,
            metrics=c.metrics,
            persistent_data=self.spec.persistent_data,
            migration_controllers=c.migration_controllers,
            # Unique per cell and run: two runs of one spec may share a machine.
            run_id=f"{uuid.uuid4().hex[:6]}-{self.cell.id.split('_', 1)[0]}",
            history=self.history,
            logs_dir=self.paths.brokers,
        )
        self._capture = self._segment_capture(cluster)
        try:
            with client_log_to(self.paths.clients_log):
                self.phase("cluster")
                cluster.up()
                if c.metrics:
                    self._scraper = self.parts.metrics_scraper(
                        lambda: cluster.metrics_targets(), self.history
                    ).start()
                self._run_on(cluster)
        except BaseException as exc:
            interrupted = isinstance(exc, KeyboardInterrupt)
            error = "interrupted (Ctrl-C)" if interrupted else f"{type(exc).__name__}: {exc}"
            self.history.append("cell.error", error=error)
            raise
        finally:
            self._stop_watch()  # the steady state failed: _run_on never stopped it
            self._write_metrics()  # ... nor wrote the metrics
            if self.keep_cluster:
                self.kept = cluster
                with contextlib.suppress(Exception):
                    cluster.save_logs(self.paths.brokers)
            else:
                cluster.close()
            self.history.write_jsonl(self.paths.history)

    def _segment_capture(self, cluster: KafkaCluster) -> SegmentCapture | None:
        """Broker forensics: brokers' copies of the workload topics (and the pipeline's
        output), taken before a broker rejoins and at collect (a real cluster only)."""
        if not isinstance(cluster, KafkaCluster):
            return None
        topics = {self.spec.topic.name: self.spec.topic.partitions}
        if self.spec.pipeline is not None:
            topics[self.spec.pipeline.output] = self.spec.topic.partitions
        capture = SegmentCapture(self.paths.segment_copies, lambda: topics, self.history)
        cluster.segment_capture = capture
        return capture

    def _forensics(self, cluster: KafkaCluster) -> None:
        """Every broker's final copy, then every copy decoded into the segment tables."""
        capture = self._capture
        if capture is None:
            return
        capture.capture_all(cluster.broker_nodes)
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

    def _run_on(self, cluster: KafkaCluster) -> None:
        self.phase("steady-state")
        self._steady_state(cluster)
        if self.checks_ready is not None:
            # After the steady state: creating the topics and __consumer_offsets (seconds of
            # broker work) overlaps the previous cell's checks, and no client is running yet.
            self.phase(ev.PHASE_CHECKS_WAIT)
            self.checks_ready()
        consumers = self.parts.consumers(
            self.spec,
            cluster.bootstrap_servers,
            self.dir,
            self.history,
            self._member_lifetime(),
            seed=self.seed,
            **({"clocks": self.clocks} if self.clocks.targets else {}),
        )
        producer = self._producer(cluster)
        nemesis = self.parts.nemesis(
            cluster,
            self.plan,
            consumers,
            self.history,
            self.seed,
            consumers.default_group,
            producer=producer if isinstance(producer, ProducerSupervisor) else None,
            **({"clocks": self.clocks} if self.clocks.targets else {}),
        )
        interrupted = False
        try:
            p = self.spec.pipeline
            if p is not None:
                self.history.append(
                    ev.PIPELINE_START,
                    pipeline_kind=p.kind,
                    input=self.spec.topic.name,
                    output=p.output,
                    group=p.group,
                    guarantee=p.guarantee,
                    members=p.members,
                )
            consumers.start()
            consumers.wait_assigned(ASSIGN_TIMEOUT_S)
            self.phase("workload")
            t0 = time.monotonic()
            producer.start()
            nemesis.start(t0)
            while producer.running or not nemesis.done:
                self._tick(producer, consumers)
                time.sleep(0.5)
            self._tick(producer, consumers)
            self.phase("heal")
            cluster.heal_all()
            nemesis.restart_crashed()
            consumers.start()
            self.phase("recovery")
            self._recover(cluster)
            self.phase("drain")
            self._drain(cluster, consumers, producer)
        except KeyboardInterrupt:
            interrupted = True
            raise
        finally:
            nemesis.stop()
            producer.stop()
            producer.join(120)
            consumers.stop()
            self._stop_watch(final_poll=not interrupted)
            if self._scraper is not None:
                self._scraper.stop()
            self.phase("collect")
            self._collect(cluster, producer, consumers, with_log=not interrupted)

    def _member_lifetime(self) -> float:
        """A bound on a consumer process's life: the whole cell, with room to spare."""
        r = self.spec.recovery
        return self.spec.planned_workload_s + r.timeout_s + r.drain_timeout_s + 600

    @property
    def producer_is_process(self) -> bool:
        """A transactional producer, one the nemesis acts on, or a Java one (a JVM) runs as its
        own process."""
        p = self.spec.producer
        return (
            p.transactions is not None
            or p.client == "java"
            or any(is_producer_fault(f.kind) for f in self.plan)
            or PRODUCER_TARGET in self.clocks.targets
        )

    def _producer(self, cluster: KafkaCluster) -> ProducerThread | ProducerSupervisor:
        """The spec's producer part as it is, and where it runs (the same for both ways)."""
        runtime = Runtime(
            bootstrap=cluster.bootstrap_servers,
            topic=self.spec.topic.name,
            directory=self.paths.producer,
            max_s=self._member_lifetime(),
            seed=self.seed,
            version=self.spec.cluster.version,
        )
        if self.producer_is_process:
            env = self.clocks.env(PRODUCER_TARGET)
            return self.parts.producer_process(
                self.spec.producer, runtime, self.history, **({"env": env} if env else {})
            )
        return self.parts.producer(self.spec.producer, runtime, self.history)

    def _tick(self, producer: ProducerThread | ProducerSupervisor, consumers: ConsumerSets) -> None:
        s = self.status
        s.attempted, s.acked, s.failed = producer.attempted, producer.acked, producer.failed
        consumers.poll()
        s.consumed = consumers.rows
        events = self.history.events
        s.lines += [line for e in events[self._seen :] if (line := status_line(e))]
        self._seen = len(events)
        self.report(s)

    def _steady_state(self, cluster: KafkaCluster) -> None:
        t = self.spec.topic
        cluster.create_topic(t.name, t.partitions, t.replication_factor, t.config)
        self._watch = self.parts.partition_watch(
            t.name,
            lambda: cluster.partition_states(t.name, timeout_s=POLL_TIMEOUT_S),
            self.history,
        ).start()
        if any(c.kind == "group" for _, c in self.spec.consumer_sets()):
            cluster.admin.ensure_offsets_topic()
        p = self.spec.pipeline
        if p is not None:
            # The output has the input's partitions: a member writes each record into its
            # input partition.
            cluster.create_topic(p.output, t.partitions, t.replication_factor, t.config)
            cluster.admin.ensure_offsets_topic()
        if self.spec.producer.transactions is not None or p is not None:
            cluster.admin.ensure_txn_state_topic()
        if not self._wait_healthy(cluster, STEADY_STATE_TIMEOUT_S):
            raise HarnessError(
                f"steady state not reached within {STEADY_STATE_TIMEOUT_S} s "
                f"(a partition of {t.name!r} leaderless or its ISR short)"
            )

    def _write_metrics(self) -> int | None:
        """metrics.parquet from the scraper (stopped first; once); None without metrics."""
        if self._scraper is None:
            return None
        try:
            return self._scraper.write(self.paths.metrics)
        except Exception as exc:  # the cell's other files matter more
            self.history.append(
                ev.METRICS_SCRAPE, rows=0, error=f"{type(exc).__name__}: {exc}"[:500]
            )
            return None

    def _stop_watch(self, final_poll: bool = False) -> None:
        if self._watch is not None:
            self._watch.stop(final_poll=final_poll)

    def _wait_healthy(self, cluster: KafkaCluster, timeout_s: float) -> bool:
        """Until every partition is led with a full ISR, and every running broker says so alike."""
        t = self.spec.topic
        try:
            wait_until(
                lambda: cluster.admin.agreed_leaders(t.name, t.partitions),
                timeout_s,
                f"every partition of {t.name!r} led with a full ISR",
                done=lambda leaders: leaders is not None,
            )
        except WaitTimeout:
            return False
        return True

    def _recover(self, cluster: KafkaCluster) -> None:
        timeout = self.spec.recovery.timeout_s
        if self._wait_healthy(cluster, timeout):
            self.history.append(
                "recovery.end",
                recovered=True,
                detail="every partition led with a full ISR, in every broker's view",
            )
        else:
            self.history.append(
                "recovery.end",
                recovered=False,
                detail=f"not every partition led with a full ISR after {timeout} s",
            )

    def _drain(
        self,
        cluster: KafkaCluster,
        consumers: ConsumerSets,
        producer: ProducerThread | ProducerSupervisor,
    ) -> None:
        """Until every consumer set has processed up to the log end (bounded); at once when a
        member could not start (it never will read: its reason is the drain's)."""
        t = self.spec.topic
        ends: dict[int, int] = {}  # the last end offsets read

        def drained() -> bool:
            nonlocal ends
            if consumers.not_started():
                return True
            try:
                # Every partition the topic has now: add-partitions may have grown it.
                ends = end_offsets(cluster.bootstrap_servers, t.name, at_least=t.partitions)
            except Exception:
                return False  # brokers still settling: ask again
            if consumers.reached(ends):
                return True
            self._tick(producer, consumers)
            return False

        try:
            wait_until(
                drained,
                self.spec.recovery.drain_timeout_s,
                "every consumer set at the log end",
                interval_s=1,
            )
        except WaitTimeout:
            self.history.append("drain.end", complete=False, lag=consumers.lag(ends), ends=ends)
            return
        failed = consumers.not_started()
        if failed:  # no lag: nothing was waited for
            reason = "; ".join(f"{name} could not start: {why}" for name, why in failed.items())
            self.history.append(ev.DRAIN_END, complete=False, lag={}, ends=ends, reason=reason)
            return
        self.history.append("drain.end", complete=True, lag={}, ends=ends)

    def _collect(
        self,
        cluster: KafkaCluster,
        producer: ProducerThread | ProducerSupervisor,
        consumers: ConsumerSets,
        with_log: bool = True,
    ) -> None:
        written: dict[str, Any] = {"ledger": producer.write(self.paths.ledger)}
        # Streamed from the members' files: a long run's records are never all in memory.
        by_consumer: Counter[str] = Counter()
        consumed = counted(consumers.consumed_tables(), by_consumer)
        written["consumed"] = write_tables(self.paths.consumed, CONSUMED, consumed)
        written["consumed_by"] = dict(sorted(by_consumer.items()))
        written["commits"] = write_tables(self.paths.commits, COMMITS, consumers.commits_tables())
        metrics = self._write_metrics()
        if metrics is not None:
            written["metrics"] = metrics
        consumers.merge_events()
        try:
            if not with_log:
                self.history.append("log.read", complete=False, records=0, detail="interrupted")
                return
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
            self._forensics(cluster)
        finally:
            self.history.append(ev.TABLES_WRITTEN, **written)

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
