"""One cell of an experiment, phase by phase, into its result folder.

steady-state gate → consumers started, warm-up (harness.workload.warm_up), the previous
cell's checks waited for → workload + nemesis → heal all → recovery (bounded) → drain
(bounded) → collect (log, tables, copies) → finish (copies decoded, broker logs, cluster
removed, history; in a run behind the next cell). Checks come after, from the folder alone
(harness.experiment.verify_run), so `verify` can redo them. From the
topic's creation to the collect phase a watch records its leader and ISR changes. The
waits are harness.runner.settle's, the collect phase harness.runner.collect's.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.cluster.kafka_cluster import KafkaCluster
from harness.cluster.metrics_scraper import MetricsScraper
from harness.common.client_log import client_log_to
from harness.errors import HarnessError
from harness.faults.producer import PRODUCER_TARGET
from harness.nemesis.nemesis import Nemesis
from harness.nemesis.schedule import PlannedFault
from harness.nodes.topology import kafka_value
from harness.results import events as ev
from harness.results.history import History
from harness.results.layout import CellPaths
from harness.runner.collect import Collector
from harness.runner.machine_sampling import MachineSampler
from harness.runner.partition_watch import POLL_TIMEOUT_S, PartitionWatch
from harness.runner.settle import drain, recover, wait_healthy
from harness.runner.status import Reporter, Status, status_line
from harness.spec import Cell
from harness.spec.share_settings import share_broker_settings
from harness.workload.clocks import ClientClocks
from harness.workload.consumer_sets import ConsumerSets
from harness.workload.producer.supervisor import ProducerSupervisor
from harness.workload.producer.thread import ProducerThread
from harness.workload.runtime import Runtime
from harness.workload.warm_up import WARM_UP_TOPIC, WarmUpOutcome, warm_up, warm_up_rate

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
    machine_sampler: Callable[..., MachineSampler] = MachineSampler
    warm_up: Callable[..., WarmUpOutcome] = warm_up


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
        collect_behind: bool = False,
        checks_idle: Callable[[], bool] | None = None,
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
        # done (phase checks-wait, after the warm-up), so that neither shares the machine with
        # a workload.
        self.checks_ready = checks_ready
        # ... and whether they are: the warm-up runs beside them, and only windows after
        # them may say it settled.
        self.checks_idle = checks_idle or (lambda: True)
        # A run's cells but its last: once the collect has read what needs the brokers up,
        # run() returns and `behind` (set then) does the rest: see finish().
        self.collect_behind = collect_behind and not keep_cluster
        self.behind: Callable[[], None] | None = None
        self._finish_once = threading.Lock()  # behind runs once, whoever calls it first
        self._finished = False
        self.history = History()
        self.status = Status(cell.id)
        self.kept: KafkaCluster | None = None
        self._seen = 0
        self.collector = Collector(self.spec, self.paths, self.history)
        self._watch: PartitionWatch | None = None  # the topic's leaders and ISRs, once it exists
        self._scraper: MetricsScraper | None = None  # Kafka's own metrics, with cluster.metrics
        self._machine: MachineSampler | None = None  # the machine itself, over the whole cell
        # The client processes whose clock a planned fault skews, and their offset files.
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
            {**share_broker_settings(self.spec), **c.broker_config},
            controllers=c.controllers,
            spare_brokers=c.spare_brokers,
            dynamic_quorum=c.dynamic_quorum,
            spare_controllers=c.spare_controllers,
            metrics=c.metrics,
            migration_controllers=c.migration_controllers,
            # Unique per cell and run: two runs of one spec may share a machine.
            run_id=f"{uuid.uuid4().hex[:6]}-{self.cell.id.split('_', 1)[0]}",
            history=self.history,
            logs_dir=self.paths.brokers,
            **self.spec.capabilities(),  # what its faults need (harness.nodes.capabilities)
        )
        self.collector.attach(cluster)
        completed = False
        try:
            self._machine = self.parts.machine_sampler(
                self.paths, max_s=STEADY_STATE_TIMEOUT_S + 600 + self._member_lifetime()
            ).start()
            with client_log_to(self.paths.clients_log):
                self.phase("cluster")
                cluster.up()
                if c.metrics:
                    self._scraper = self.parts.metrics_scraper(
                        lambda: cluster.metrics_targets(), self.history
                    ).start()
                self._run_on(cluster)
            completed = True
        except BaseException as exc:
            interrupted = isinstance(exc, KeyboardInterrupt)
            error = "interrupted (Ctrl-C)" if interrupted else f"{type(exc).__name__}: {exc}"
            self.history.append("cell.error", error=error)
            raise
        finally:
            self._stop_watch()  # the steady state failed: _run_on never stopped it
            self._write_metrics()  # ... nor wrote the metrics
            self._stop_machine(cluster)  # ... nor the machine's table
            if completed and self.collect_behind:
                self.behind = lambda: self._finish_behind(cluster)
            else:
                self.finish(cluster)

    def _finish_behind(self, cluster: KafkaCluster) -> None:
        """finish(behind=True) once: from the checks' thread, or from the run's own cleanup
        when Ctrl-C came before it was handed over (a second call waits for the first)."""
        with self._finish_once:
            if not self._finished:
                self._finished = True
                self.finish(cluster, behind=True)

    def finish(self, cluster: KafkaCluster, behind: bool = False) -> None:
        """The end of the collect that needs no client: the copies decoded (a JVM, seconds),
        broker logs saved, the cluster removed (or kept), then the history written. `behind`:
        in the checks' thread while the next cell's cluster starts, as its own phase (not
        reported: the live display is the next cell's by then)."""
        try:
            if behind:
                self.history.append(ev.PHASE, phase=ev.PHASE_COLLECT_BEHIND)
            if self.keep_cluster:
                self.collector.decode(cluster)
                self.kept = cluster
                with contextlib.suppress(Exception):
                    cluster.save_logs(self.paths.brokers)
            else:  # the copies decoded while the nodes' containers are removed
                cluster.close(beside=lambda: self.collector.decode(cluster))
        except Exception as exc:  # behind: the thread's error would end the whole run
            if not behind:
                raise
            self.history.append(ev.CELL_ERROR, error=f"{type(exc).__name__}: {exc}")
        finally:
            self.history.write_jsonl(self.paths.history)

    def _run_on(self, cluster: KafkaCluster) -> None:
        self.phase("steady-state")
        self._steady_state(cluster)
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
            # The consumers join their groups during the warm-up, and both overlap the
            # previous cell's checks (no workload runs yet: nothing of theirs is measured).
            consumers.start()
            self._warm_up(cluster, producer)
            if self.checks_ready is not None:
                self.phase(ev.PHASE_CHECKS_WAIT)
                self.checks_ready()
            consumers.wait_assigned(ASSIGN_TIMEOUT_S)
            self.phase("workload")
            t0 = time.monotonic()
            producer.start()
            nemesis.start(t0)
            next_tick = 0.0
            while producer.running or not nemesis.done:
                # The end is seen within 0.1 s (it was up to 0.5 s late: ~0.25 s a cell); the
                # status and the consumers' files are still read every 0.5 s.
                if time.monotonic() >= next_tick:
                    self._tick(producer, consumers)
                    next_tick = time.monotonic() + 0.5
                time.sleep(0.1)
            self._tick(producer, consumers)
            self.phase("heal")
            cluster.heal_all()
            nemesis.restart_crashed()
            consumers.start()
            self.phase("recovery")
            recover(cluster, self.spec, self.history)
            self.phase("drain")
            drain(
                cluster, consumers, self.spec, self.history, lambda: self._tick(producer, consumers)
            )
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
            self._stop_machine(cluster)
            self.collector.collect(
                cluster, producer, consumers, self._write_metrics, with_log=not interrupted
            )

    def _warm_up(
        self, cluster: KafkaCluster, producer: ProducerThread | ProducerSupervisor
    ) -> None:
        """The cluster and the ledger producer's client brought to pace on a topic of their
        own (harness.workload.warm_up), the topic deleted after; one WARM_UP_END event."""
        max_s = self.spec.warm_up.max_s
        if max_s <= 0 or cluster.warm:  # a cluster that ran a workload is warm (explore's reuse)
            return
        self.phase(ev.PHASE_WARM_UP)
        t = self.spec.topic
        # The workload topic's shape, and of its configs only min.insync.replicas (a
        # compacted topic would refuse the warm-up's keyless records).
        config = {k: kafka_value(v) for k, v in t.config.items() if k == "min.insync.replicas"}
        try:
            cluster.admin.create_topic(WARM_UP_TOPIC, t.partitions, t.replication_factor, config)
        except HarnessError as exc:
            self.history.append(ev.WARM_UP_END, settled=False, seconds=0.0, error=str(exc)[:300])
            return
        warm = producer.warm if isinstance(producer, ProducerThread) else None
        outcome = self.parts.warm_up(
            cluster.bootstrap_servers,
            t.partitions,
            max_s,
            rate=warm_up_rate(self.spec.producer.rate),
            warm_client=warm,
            quiet=self.checks_idle,
        )
        deleted = True
        try:
            cluster.admin.delete_topic(WARM_UP_TOPIC)
            cluster.admin.wait_topic_gone(WARM_UP_TOPIC)  # before second 0, not in it
        except HarnessError:
            deleted = False
        self.history.append(ev.WARM_UP_END, **outcome.fields(), topic_deleted=deleted)

    def _stop_machine(self, cluster: KafkaCluster) -> None:
        """Stop the sampler and write machine.parquet: at the collect, or when a phase broke."""
        machine, self._machine = self._machine, None
        if machine is not None:
            machine.stop(cluster.container_names)

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
            or any(f.process == PRODUCER_TARGET for f in self.plan)
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
        p = self.spec.pipeline
        groups = p is not None or any(c.kind == "group" for _, c in self.spec.consumer_sets())
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="offsets-topic") as pool:
            # __consumer_offsets (50 partitions) is created beside the topic, not after it.
            offsets = pool.submit(cluster.admin.ensure_offsets_topic) if groups else None
            cluster.create_topic(t.name, t.partitions, t.replication_factor, t.config)
            self._watch = self.parts.partition_watch(
                t.name,
                lambda: cluster.partition_states(t.name, timeout_s=POLL_TIMEOUT_S),
                self.history,
            ).start()
            if p is not None:
                # The output has the input's partitions: a member writes each record into its
                # input partition.
                cluster.create_topic(p.output, t.partitions, t.replication_factor, t.config)
            if offsets is not None:
                offsets.result()
        if self.spec.producer.transactions is not None or p is not None:
            cluster.admin.ensure_txn_state_topic()
        if not wait_healthy(cluster, self.spec, STEADY_STATE_TIMEOUT_S):
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
