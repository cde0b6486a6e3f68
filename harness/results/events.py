"""The kinds of event in `history.jsonl`, with the fields each carries (besides `ts`, `kind`).

Every event is `{"ts": <ms since the epoch>, "kind": <one of these>, ...fields}`. Events of
a consumer process (written to its `consumers/<set>-<member>.events.jsonl`, merged into the
history at collect) also carry `consumer` ("<set>/<member>"). Readers must tolerate fields
they do not know; writers may add fields, never rename or drop one.
"""

from __future__ import annotations

from typing import Any

# One event as read from a history: JSON, `ts` and `kind` and the fields of its kind.
Event = dict[str, Any]

# --- the runner ---------------------------------------------------------------------------
PHASE = "phase"  # phase: one of PHASES
CELL_ERROR = "cell.error"  # error: why the cell stopped early ("interrupted (Ctrl-C)" too)
RECOVERY_END = "recovery.end"  # recovered: bool (every partition led, full ISR), detail
# complete: bool, lag: {set: {partition: records}}, ends; reason (complete false): why the
# drain ended before its timeout (a member could not start: it never reads, so nobody waits)
DRAIN_END = "drain.end"
LOG_READ = "log.read"  # complete: bool, records, ends, detail (the final read of the topic)
# The collect phase's row counts of what it wrote: ledger, consumed, commits, log, output,
# metrics (a table not written is absent) and consumed_by {consumer: rows}; the `evidence` check holds
# the files to them (histories before 2026-11-24 lack the event).
TABLES_WRITTEN = "tables.written"
# A pipeline (spec `pipeline:`): pipeline_kind (transform | command; histories before
# 2026-11-24 lack it: transform), output, input, group, guarantee, members, at the workload's
# start; its members are the consumer set PIPELINE_SET ("pipeline/m0", ...). A command
# pipeline's members write no consumed/commits lines: the consumer checks leave the set out.
PIPELINE_START = "pipeline.start"
# The final read of the pipeline's output topic: topic, isolation, complete, records, ends,
# detail (as log.read, which stays the input topic's alone).
OUTPUT_READ = "output.read"
PIPELINE_SET = "pipeline"

# Phase names, in the order a cell runs them.
PHASE_CLUSTER = "cluster"
PHASE_STEADY_STATE = "steady-state"
PHASE_WORKLOAD = "workload"
PHASE_HEAL = "heal"
PHASE_RECOVERY = "recovery"
PHASE_DRAIN = "drain"
PHASE_COLLECT = "collect"
# After steady-state, in a run's cells only: the cell waits until the checks' Spark session
# has started (warmed up while the first cluster started) and the previous cell's checks
# (and its collect-behind) are done, so that no workload shares the machine with them.
PHASE_CHECKS_WAIT = "checks-wait"
# A run's cells but its last: the end of collect that needs no running client (decoding the
# segment copies with DumpLogSegments, saving broker logs, removing the cluster) runs in the
# checks' thread, behind the next cell's cluster start, just before this cell's checks.
PHASE_COLLECT_BEHIND = "collect-behind"
# After steady-state: traffic on a topic of its own until the cluster's pace settles
# (harness.workload.warm_up), beside the previous cell's checks; its outcome is one
# WARM_UP_END event: settled (bool), seconds, window_p99_ms (each window's ack p99),
# records (acked), error (only when it stopped short), topic_deleted (bool).
PHASE_WARM_UP = "warm-up"
WARM_UP_END = "warm_up.end"
PHASES = (
    PHASE_CLUSTER,
    PHASE_CHECKS_WAIT,
    PHASE_STEADY_STATE,
    PHASE_WARM_UP,
    PHASE_WORKLOAD,
    PHASE_HEAL,
    PHASE_RECOVERY,
    PHASE_DRAIN,
    PHASE_COLLECT,
    PHASE_COLLECT_BEHIND,
)

# --- the cluster --------------------------------------------------------------------------
# run_id, mode, version, nodes, broker_config, spares (if any), metrics_ports {node: host
# port of its /metrics} (with metrics), migration_controllers (planned, started by a
# migrate-to-kraft)
CLUSTER_START = "cluster.start"
CLUSTER_READY = "cluster.ready"  # run_id, bootstrap
# attempt, ports, busy, error: a host port was taken before Docker bound it; new ports, same run
CLUSTER_PORTS_RETRY = "cluster.ports_retry"
CLUSTER_HEALED = "cluster.healed"  # errors: heals that failed in the heal-all sweep
CLUSTER_REMOVED = "cluster.removed"  # run_id
# Broker forensics (harness.cluster.segment_capture). A broker's partition directories of
# the workload topics copied aside: node, label (the capture's name in segments.parquet),
# reason (heal: before it rejoins after a fault, the fault's `fault` and `fault_id` too;
# wipe: before its disk is wiped; collect: at the end), complete (false: the copy failed,
# `error` says why), state (Docker's word for the broker then: running means it may append
# after the copy), partitions, bytes (segment files copied), took_ms.
SEGMENTS_CAPTURED = "segments.captured"
# The copies decoded at collect (one DumpLogSegments JVM): complete, captures, records,
# raw_bytes (the copies' size), kept (whether the raw copies stay in segments/), error.
SEGMENTS_DECODED = "segments.decoded"
TOPIC_CREATE = "topic.create"  # topic, partitions, replication_factor, config
# The nodes' logs written to brokers/ (KafkaCluster.save_logs, at the cluster's end): files
# {node name: file name}, failed {node name: error} (a log not saved or cut short). Histories
# before 2026-11-26 lack it.
BROKER_LOGS_SAVED = "broker_logs.saved"
# The spec's broker_logs.allow (regexes), at the cell's start when the list is not empty: the
# broker_logs check reads it from here.
BROKER_LOGS_ALLOW = "broker_logs.allow"
NODE_START_FAILED = "node.start_failed"  # node, error (a start retried like a supervisor)
# node, exits, error: Kafka exited before its start-up line MAX_EARLY_EXITS times in a row
# (harness.nodes.supervised_start); the heals no longer start it, the cell goes on without it
NODE_REFUSED_START = "node.refused_start"
# A node run on a new container with its log directories: node, and from_version / to_version
# (an upgrade) or phase (a migration's roll: broker-migrating, broker-kraft, controller-final).
NODE_REPLACED = "node.replaced"
# A dynamic controller quorum (cluster.dynamic_quorum, KIP-853): `cluster.start` also carries
# quorum {dynamic: true, voters: [initial voter ids], spare_controllers: [ids]}. A controller
# removed from the quorum left the cluster: node, stopped, was_up (remove-controller).
QUORUM_RETIRED = "quorum.retired"
# The quorum as Kafka's `describe --status` gave it once the faults were healed (the recovery
# phase, dynamic quorums only): leader (null: none), voters [ids], directory_ids {id: directory
# id}, observers [ids]; or error (no controller answered).
QUORUM_STATUS = "quorum.status"
# migrate-to-kraft: the KRaft quorum started (nodes, cluster_id read from ZooKeeper).
MIGRATION_CONTROLLERS = "migration.controllers"
# The cluster's mode changed (mode, run_id): a migrated cluster is a KRaft cluster from here.
CLUSTER_MODE = "cluster.mode"
# The workload topic's partitions as a trusted broker's metadata has them, polled about once a
# second from the topic's creation to the collect phase (harness.runner.partition_watch): one
# event per partition at the first poll, then one each time its leader or ISR changed: topic,
# partition, leader (int, null: none), isr (sorted ids), replicas. Histories before
# 2026-11-25 lack it (their ISR figures are undecided).
PARTITION_STATE = "partition.state"
# The watch's end (at the collect phase): topic, polls (answered), failed (polls that raised or
# timed out: skipped, so a change may be seen up to that much later), changes (partition.state
# events), error (the last failure's text, "" if none).
PARTITION_WATCH_END = "partition.watch_end"
# Kafka's own metrics (cluster.metrics, harness.cluster.metrics_scraper) at the collect
# phase: interval_s, scrapes {node: scrapes}, failed {node: scrapes that got no answer},
# rows (metrics.parquet's). Absent when the cell ran without metrics.
METRICS_SCRAPE = "metrics.scrape"

# --- faults (the nemesis) -----------------------------------------------------------------
# fault_id, fault (kind), target (node name), + kind's own fields; a planned one also index,
# spec_kind (the spec's kind: `fault` is the class's), at_s, late_s
FAULT_INJECT = "fault.inject"
FAULT_HEAL = "fault.heal"  # fault_id, the same fields as its inject
# power-loss: fault_id, fault, discarded (node -> files, bytes, entries, segments, report)
FAULT_DISCARDED = "fault.discarded"
FAULT_SKIPPED = "fault.skipped"  # index (in the spec's faults), fault, target, reason, optional
# index, fault, error (an inject or heal that raised, or the fault's nemesis thread died), optional
FAULT_ERROR = "fault.error"
FAULT_PREFIX = "fault."

# --- the producer -------------------------------------------------------------------------
PRODUCER_START = "producer.start"  # acks, rate, idempotence
PRODUCER_ERRORS = "producer.errors"  # count, error: delivery errors of one second
PRODUCER_END = "producer.end"  # attempted, acked, failed, undelivered (+ fatal: the error)
PRODUCER_CRASH = "producer.crash"  # error (the workload broke: the cell is unknown)
# A producer process (transactional, or one the nemesis acts on; harness.results.producer_files).
# Its own events carry `producer` ("p<k>", the incarnation) and are merged at collect.
PRODUCER_LAUNCH = "producer.launch"  # producer, pid, first_seq: a process started (or restarted)
PRODUCER_KILL = "producer.kill"  # producer, pid (a `producer-crash` fault); note if not running
PRODUCER_PAUSE = "producer.pause"  # producer (SIGSTOP: a `producer-pause` fault)
PRODUCER_RESUME = "producer.resume"  # producer (SIGCONT)
# producer, call (init/begin/commit/abort_transaction), txn, error, code, retriable,
# abortable, fatal, action (retry | abort | reinit): librdkafka's transactional errors
PRODUCER_TXN_ERROR = "producer.txn_error"
PRODUCER_REINIT = "producer.reinit"  # producer, txn (its outcome unknown), error: a new client
# first_seq, rate, end_ms, planned: an incarnation's pacing starts now (its ts), record
# first_seq + j due j / rate s later, `planned` records due before end_ms (and the spec's
# last seq); spark_jobs/checks/schedule.py measures the sends against it
PRODUCER_SCHEDULE = "producer.schedule"
# seq, ms: one call that handed a record to the client waited that long (the Java client's
# send() over 10 ms; librdkafka's full local queue: the produce() retried after polls)
PRODUCER_BLOCKED = "producer.blocked"

# --- consumer sets, as the runner sees their processes ------------------------------------
CONSUMER_LAUNCH = "consumer.launch"  # consumer, pid: a process started (first start or restart)
# consumer, and pid when a running process was SIGKILLed (a `consumer-crash` fault); without
# pid, note says why (it was not running; it did not stop on SIGTERM); index: the planned
# fault's place in the spec's faults (a crash the nemesis did; histories before 2026-11-24 lack it)
CONSUMER_CRASH = "consumer.crash"
CONSUMER_EXIT = "consumer.exit"  # consumer, code: a process ended by itself
CONSUMER_UNASSIGNED = "consumer.unassigned"  # consumers, waited_s: not ready in time

# --- consumer processes, as they see themselves (all carry `consumer`) --------------------
# pid, generation (Spark), isolation: the process's effective isolation level, one of
# ISOLATION_LEVELS (a group member: librdkafka's read_committed unless its config sets
# `isolation.level`; a Spark query: the Java consumer's read_uncommitted unless its source
# options set `kafka.isolation.level`). Histories written before the field lack it.
CONSUMER_START = "consumer.start"
CONSUMER_ASSIGN = "consumer.assign"  # generation, partitions
CONSUMER_REVOKE = "consumer.revoke"  # generation, partitions
CONSUMER_COMMIT_FAILED = "consumer.commit_failed"  # error
CONSUMER_ERROR = "consumer.error"  # error
# error: the member's program could not be started (a command pipeline's exec failed); the
# drain stops waiting for the set and the cell is unknown with this as its reason
CONSUMER_NOT_STARTED = "consumer.not_started"
CONSUMER_STOP = "consumer.stop"  # generation
# generation, ends {partition: offset}: the member, idle, has passed everything below these
# offsets (processed, or skipped by auto.offset.reset=latest on a partition new to the group)
CONSUMER_AT_END = "consumer.at_end"
# A pipeline member's transactional errors: call (begin_transaction, send_offsets, commit,
# abort, flush), error, code, retriable, abortable, fatal, action (retry | abort | reinit |
# rewind); and its rewinds: partitions {partition: offset} it seeked back to after an abort
# (the records of the aborted transaction are processed again; KAFKA-17582's shape).
PIPELINE_TXN_ERROR = "consumer.txn_error"
PIPELINE_REWIND = "consumer.rewind"
# A pipeline member's batch left pending by a SIGKILL between its commit and its `consumed`
# lines, resolved by its next process: records, committed (the group's offsets past them:
# the lines were written then), error (the offsets could not be read: lines not written).
PIPELINE_PENDING = "consumer.pending"
# A share-group member's start (CONSUMER_START) also carries share_group, ack (explicit |
# implicit), delivery_limit and lock_ms (the brokers' settings it runs under); the runner's
# share.group_config: group and the group configs it set before the first member joined.
SHARE_GROUP_CONFIG = "share.group_config"
# group, error: the drain could not read the share group's lag (ShareGroupCommand failed);
# until it can, every record counts as left (once per distinct error)
SHARE_LAG_UNKNOWN = "share.lag_unknown"
CONSUMER_PREFIX = "consumer."
READ_COMMITTED = "read_committed"
READ_UNCOMMITTED = "read_uncommitted"
ISOLATION_LEVELS = (READ_COMMITTED, READ_UNCOMMITTED)

# A Spark query: committed_batch, committed_end {partition: offset}, rerun_batch (planned but
# not committed: run again), generation; recorded at every start, before the query runs.
SPARK_RESUME = "spark.resume"
SPARK_QUERY_STARTED = "spark.query.started"  # generation, run_id
# generation, batch, rows, start/end {partition: offset}, trigger_ms, batch_ts
SPARK_BATCH = "spark.batch"
SPARK_QUERY_FAILED = "spark.query.failed"  # generation, data_loss: bool, error
SPARK_PREFIX = "spark."
