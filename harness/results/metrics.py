"""The figures a cell's `summary.json` holds, as the checks write them and verdicts read them.

Each figure is decided by one check (its `decides`, spark_jobs/checks/<check>.py); the
names here are the vocabulary the verdict and the report read without Spark, held to the
checks' declarations by tests/unit/test_check_figures.py (a name on one side only fails)."""

from __future__ import annotations

from typing import TypedDict

# The counts of every cell's summary.json (under "counts"), in the order tables show them.
COUNT_NAMES = (
    "attempted",
    "acked",
    "lost",
    "lost_never_consumed",
    "duplicated",
    "reprocessed",
    "unacked_present",
    "out_of_order",
    "failed",  # ledger status `fail` (not `unknown`); names are only ever appended
    # Transactions and Jepsen's Kafka anomaly classes (spark_jobs/checks/transactions.py).
    "aborted_read",
    "torn_transaction",
    "inconsistent_offsets",
    "poll_skip",
    "nonmonotonic_send",
    # A consume-transform-produce pipeline's output topic against its input
    # (spark_jobs/checks/pipeline.py); 0 in a cell without a pipeline.
    "output_duplicates",
    "output_lost",
    "output_aborted",
)
# Times in seconds, at the summary's top level.
TIME_METRICS = ("max_stall_s", "unavailable_s")
# Producer ack latency (ack_ts - send_ts of `ok` records) in ms, at the summary's top level:
# nearest-rank percentiles and the maximum over all of them; then the p99 of those sent while
# a fault window was open (fault.inject .. fault.heal), of the others (a same-run baseline),
# and of those sent after a heal until the cluster had recovered (not in the baseline).
LATENCY_METRICS = (
    "ack_p50_ms",
    "ack_p99_ms",
    "ack_max_ms",
    "ack_p99_ms_faulted",
    "ack_p99_ms_steady",
    "ack_p99_ms_recovering",
)
# The producer's own schedule (spark_jobs/checks/schedule.py), at the summary's top level:
# records the schedule planned, the most seconds a send was behind its planned time, the
# seconds it was more than SCHEDULE_TOLERANCE_S behind, the seconds spent blocked in the
# client. Figures to read beside the ack figures (and `schedule_notes` on them).
SCHEDULE_METRICS = (
    "producer_planned",
    "producer_behind_max_s",
    "producer_behind_s",
    "producer_blocked_s",
)
SCHEDULE_TOLERANCE_S = 1.0
# ERROR and FATAL events of the brokers' logs not allowed by the spec's `broker_logs.allow`
# (spark_jobs/checks/broker_logs.py), at the summary's top level.
BROKER_LOG_METRICS = ("broker_errors",)
# A dynamic controller quorum's voters once the faults were healed against the ones its
# operations left (spark_jobs/checks/quorum.py), at the summary's top level: the voters in
# one set and not the other (0: the quorum is the one the operator meant).
QUORUM_METRICS = ("voters_unexpected",)
# Figures of one Spark consumer set (summary "spark_by_set" -> set -> figure).
SPARK_FIGURES = ("read_twice", "sink_duplicates", "data_loss_stop", "consumed_then_lost")
# The Spark figures also summed over the Spark sets, at the summary's top level.
SPARK_METRICS = ("read_twice", "sink_duplicates")
# Figures of one share-group set (summary "share_by_set" -> set -> figure; spark_jobs/checks/
# share.py): records delivered more than once, records handed to another member after an
# ACCEPT, records archived, acknowledgements refused because the acquisition lock had
# expired, and the longest wait from a record's delivery to its next one.
SHARE_FIGURES = (
    "redelivered",
    "accepted_twice",
    "archived",
    "lock_expired",
    "redelivery_wait_s",
)
# Figures also measured per consumer set, and the summary key holding the per-set values.
PER_SET_KEYS = {
    "stall_s": "stalls_by_set",
    "lost_never_consumed": "lost_never_consumed_by_set",
    "aborted_read": "aborted_read_by_set",  # a consumer set, or "log" (the final read)
    # aborted transactions' seqs each set consumed, read_uncommitted sets too (0 per set
    # without transactions)
    "aborted_consumed": "aborted_consumed_by_set",
    "poll_skip": "poll_skip_by_set",
    **dict.fromkeys(SPARK_FIGURES, "spark_by_set"),
    **dict.fromkeys(SHARE_FIGURES, "share_by_set"),
    # partition-seconds without a live owner (spark_jobs/checks/ownership.py)
    "unowned_s": "ownership_by_set",
}
# Whether the cluster healed in the recovery phase (true / false; null: never got there).
RECOVERED = "recovered"
# The workload topic's ISR over the cell (summary "isr", harness.results.isr), from the
# history's partition.state events. Expectations name them `isr.<figure>` (added
# 2026-12-07: KAFKA-15665's reassignment that completes with one replica in sync shows as
# `isr.min_isr_size`, a count no JMX metric gives).
ISR_FIGURES = ("isr_shrinks", "isr_expands", "min_isr_size", "under_replicated_s")
# Kafka's own view (summary "broker", spark_jobs/checks/broker_metrics.py), from metrics.parquet: what
# the brokers' and controllers' JMX metrics said over the cell. Expectations name them
# `broker.<figure>`; an undecided one is None with its reason under `undecided` as
# `broker.<figure>` (a node whose scrapes failed outside a fault on it, a metric the mode or
# version does not have, a cell run without metrics).
BROKER_FIGURES = (
    "under_replicated_max",  # max over time of UnderReplicatedPartitions summed over brokers
    "under_replicated_s",  # seconds that sum was > 0
    "offline_partitions_s",  # seconds the active controller's OfflinePartitionsCount was > 0
    # ... and its max over time: a count, so a busy machine leaves it decided (a partition
    # offline at all, where the seconds would say how long; rolling-upgrade's claim)
    "offline_partitions_max",
    "isr_shrinks",  # increase of IsrShrinksPerSec's count, summed over brokers
    "isr_expands",  # ... IsrExpandsPerSec's
    "leader_elections",  # ... LeaderElectionRateAndTimeMs's count (ZooKeeper mode only)
    "unclean_elections",  # ... UncleanLeaderElectionsPerSec's count, over controllers
    "elr_elections",  # ... ElectionFromEligibleLeaderReplicasPerSec's (KIP-966, Kafka 4.x)
    "controller_changes",  # times the node with ActiveControllerCount 1 changed
    "produce_p99_ms_max",  # max over time and brokers of Produce TotalTimeMs p99
    "fetch_p99_ms_max",  # ... of FetchConsumer TotalTimeMs p99
)
BROKER_PREFIX = "broker."  # an expectation's metric `broker.<figure>`


# --- The figures as types: what a check returns and what a verdict reads ---------------------
# (JSON on disk; these say which key holds what. A row of a list is a TypedDict of its own.)


class Window(TypedDict):
    """A time window of the run (summary "unavailable_windows")."""

    start_ms: int
    end_ms: int
    duration_s: float


class StepStalls(TypedDict):
    """A consumer set's longest stall inside one operation step's period (summary
    "step_stalls"; the stall check): step fault_id -> set -> seconds."""

    fault_id: int
    stall_s: dict[str, float]


class OperationStep(TypedDict):
    """One step of an operation (an upgrade's node, say) and what it cost (summary
    "operation_steps"): its period runs from its inject to the next step's (the last: to the
    operation's heal); `down_s` its own window; the workload's figures inside the period,
    None when undecided."""

    fault_id: int
    step_of: int
    fault: str
    target: str
    phase: str | None  # a migration step's phase; None for an upgrade's
    start_ms: int
    end_ms: int
    down_s: float | None
    unavailable_s: float | None  # acknowledgement gaps overlapping the period
    stall_s: dict[str, float] | None  # per consumer set, its longest stall in the period


class StallWindow(TypedDict):
    """One of a consumer set's longest stalls (summary "stall_windows")."""

    set: str
    start_ms: int
    end_ms: int
    duration_s: float


class Resumption(TypedDict):
    """Where one partition resumed after a restart (summary "resumptions")."""

    set: str
    consumer: str
    generation: int
    partition: int
    committed: int | None
    first_offset: int | None
    exact: bool | None
    skipped: int | None
    reread: int


class GenerationRows(TypedDict):
    """A set's rows in one generation (summary "reprocessed_by_generation")."""

    set: str
    generation: int
    rows: int
    distinct: int
    reprocessed: int


class OwnershipFigures(TypedDict):
    """One group set's partition ownership (summary "ownership_by_set" -> set)."""

    assignments: int  # consumer.assign events (generations) of the set's members
    revocations: int  # consumer.revoke events
    unowned_s: float  # partition-seconds no live member held, summed over partitions
    longest_unowned_s: float  # the longest one partition went without an owner


class GenerationWait(TypedDict):
    """One assignment (generation) of a member (summary "generation_waits")."""

    set: str
    consumer: str
    generation: int | None
    ts: int  # ms, the consumer.assign event
    partitions: list[int]  # what it added to the member
    waited_s: float  # the longest any of them had gone without an owner until then
    reprocessed: int | None  # the generation's rows of records the set had consumed before


class PlaceSample(TypedDict):
    """A (partition, offset) seen with more than one seq ("inconsistent_offsets_sample")."""

    partition: int
    offset: int
    seqs: list[int]


class SparkSetFigures(TypedDict):
    """One Spark consumer set's figures (summary "spark_by_set" -> set)."""

    starts: int
    batches: int
    sink_rows: int
    sink_duplicates: int
    orphan_files: int
    torn_files: int
    raw_rows: int
    raw_duplicates: int
    read_twice: int
    data_loss_stop: int
    consumed_then_lost: int | None
    query_error: str | None


class ShareSetFigures(TypedDict):
    """One share-group set's figures (summary "share_by_set" -> set; spark_jobs/checks/share.py)."""

    deliveries: int  # `delivered` rows: every time a member was handed a record
    records: int  # distinct (partition, offset) delivered
    # The SHARE_FIGURES are None when the drain ended before the group settled and they were
    # 0 (a positive one stands as a lower bound: `undecided` says so, as `<figure>.<set>`).
    redelivered: int | None  # records delivered more than once
    delivery_counts: dict[str, int]  # highest delivery count -> records
    accepted: int  # records whose ACCEPT the broker took
    # records handed to another member after the broker took one member's ACCEPT
    accepted_twice: int | None
    # records with more than one ACCEPT answered "taken": a second one alone breaks nothing
    # (Kafka takes an acknowledgement below the share-partition start offset as a no-op)
    accept_taken_twice: int
    archived: int | None  # records rejected, or handed out delivery_limit times, not accepted
    archived_by: dict[str, int]  # reject | limit -> records
    lock_expired: int | None  # acknowledgements refused with INVALID_RECORD_STATE
    # seconds from a record's delivery to its next one: the longest and the median (None
    # without a redelivery): how long what a killed member held stayed out of reach
    redelivery_wait_s: float | None
    redelivery_wait_p50_s: float | None
    ack_errors: dict[str, int]  # every refused acknowledgement's error -> count
    # lock_expired per answer refused (accept | release | reject | renew): an ACCEPT refused
    # is finished work wasted, a RENEW refused a record lost before the work was done
    lock_expired_by_ack: dict[str, int]
    delivery_limit: int  # the brokers' group.share.delivery.count.limit the set ran under
    lock_ms: int  # their group.share.record.lock.duration.ms
    note: str


class OutsideOverload(TypedDict):
    """An ack figure computed again without the samples taken while the machine was
    overloaded (summary "outside_overload" -> figure; spark_jobs/checks/latency.py): a p99 is
    its slowest 1 % of samples, and a start-up overload can hold all of them. Present only
    when some sample was; the verdict judges `value` when enough samples remain
    (harness.results.overload_rules.judged_outside)."""

    value: int | None  # the figure over the part's samples outside overload (None: none left)
    whole: int  # the figure over all of them: the top-level figure
    samples: int  # the part's acked records
    overloaded_samples: int  # ... whose [send_ts, ack_ts] reached an overloaded span


class PipelineFigures(TypedDict):
    """The pipeline's output figures (summary "pipeline"; {} in a cell without one)."""

    guarantee: object
    output_records: int | None
    output_uncommitted: int | None
    origin_mismatch: int | None


class Evidence(TypedDict):
    """The tables against the history (summary "evidence")."""

    compared: list[str]
    disagreements: list[str]


class LostPlace(TypedDict, total=False):
    """One lost record and where it went (summary "lost_where_sample")."""

    seq: int
    where: str  # one of LOST_PLACES
    partition: int | None  # where the copy held it (else where it was acknowledged)
    offset: int | None
    broker: str | None  # the broker whose copy held it (None: in no copy)
    capture: str | None  # that copy's label (segments.parquet `capture`)
    capture_ts: int | None  # when it was copied (ms)
    why: str  # an unknown's reason


# Where the lost records went (summary "lost_where", spark_jobs/checks/forensics.py).
LOST_PLACES = ("never_appended", "truncated", "deleted", "unsynced", "corrupted", "unknown")
# Summary sections whose keys expectations name as `<section>.<key>` (lost_where.truncated).
# (`broker.<figure>`: Kafka's own metrics; `lost_where.<place>`: the forensics; `isr.<figure>`:
# the partition watch's view of the workload topic's ISR.)
SECTION_FIGURES: dict[str, tuple[str, ...]] = {
    "broker": BROKER_FIGURES,
    "lost_where": LOST_PLACES,
    "isr": ISR_FIGURES,
}
# ... of which the verdict step computes these from the history itself (harness.results.isr),
# as it does `recovered`: no Spark check decides them.
HISTORY_SECTIONS = ("isr",)


class BrokerLogTemplate(TypedDict):
    """ERROR/FATAL events of the brokers' logs of one shape (summary
    "broker_errors_by_template"; harness.results.broker_log)."""

    logger: str
    template: str
    level: str
    count: int
    nodes: list[str]  # the log files' names (`1` for brokers/1.log)
    first_ts: int | None  # ms, the node's clock as printed
    example: str  # the earliest event's first line
    detail: str  # its first continuation line (the exception), "" if none
    allowed: bool  # matched by the spec's broker_logs.allow (not in broker_errors)


class QuorumFigures(TypedDict):
    """A dynamic quorum's voters (summary "quorum"; spark_jobs/checks/quorum.py)."""

    initial: list[int]  # the voters the cluster was formatted with
    expected: list[int]  # ... with the completed add-controller / remove-controller applied
    final: list[int] | None  # as `describe --status` listed them after the heal (None: no answer)
    leader: int | None  # the quorum's leader then


class Figures(TypedDict, total=False):
    """What the checks give for a cell (summary.json's measured part), or a part of it: one
    check returns only the keys it decides. None: undecided, the reason in `undecided`."""

    counts: dict[str, int | None]  # COUNT_NAMES
    undecided: dict[str, str]  # figure name -> why it is None (or a lower bound)
    max_stall_s: float | None
    unavailable_s: float | None
    ack_p50_ms: int | None  # LATENCY_METRICS
    ack_p99_ms: int | None
    ack_max_ms: int | None
    ack_p99_ms_faulted: int | None
    ack_p99_ms_steady: int | None
    ack_p99_ms_recovering: int | None
    # part (all, faulted, recovering, steady, start) -> figure -> ms
    ack_latency: dict[str, dict[str, int]]
    # LATENCY_METRICS figure -> itself over the samples outside the machine's overloaded
    # spans, for a figure some of whose samples were taken while it was overloaded
    outside_overload: dict[str, OutsideOverload]
    producer_planned: int | None  # SCHEDULE_METRICS
    producer_behind_max_s: float | None
    producer_behind_s: float | None
    producer_blocked_s: float | None
    # A send-rate-dependent figure -> how far behind its schedule the producer was during
    # the figure's window, when more than SCHEDULE_TOLERANCE_S (no key: it kept up).
    schedule_notes: dict[str, str]
    stalls_by_set: dict[str, float | None]
    stall_windows: list[StallWindow] | None
    step_stalls: list[StepStalls] | None
    operation_steps: list[OperationStep] | None
    unavailable_windows: list[Window] | None
    lost_never_consumed_by_set: dict[str, int | None]  # None: the drain ended first
    reprocessed_by_generation: list[GenerationRows] | None
    ownership_by_set: dict[str, OwnershipFigures]
    generation_waits: list[GenerationWait] | None
    resumptions: list[Resumption] | None
    spark_by_set: dict[str, SparkSetFigures]
    share_by_set: dict[str, ShareSetFigures]
    read_twice: int | None  # SPARK_METRICS
    sink_duplicates: int | None
    lost_seqs_sample: list[int] | None
    duplicated_seqs_sample: list[int] | None
    transactions: dict[str, int]  # outcome -> transactions
    aborted_read_by_set: dict[str, int]
    aborted_consumed_by_set: dict[str, int | None]
    aborted_read_seqs_sample: list[int] | None
    torn_transactions_sample: list[int] | None
    inconsistent_offsets_sample: list[PlaceSample] | None
    poll_skip_by_set: dict[str, int]
    pipeline: PipelineFigures | dict[str, object]
    output_duplicates_seqs_sample: list[int] | None
    output_lost_seqs_sample: list[int] | None
    evidence: Evidence
    broker: dict[str, float | int | None]  # BROKER_FIGURES (None: undecided)
    # The machine over the cell (spark_jobs/checks/machine.py): lag p50/p99/max, seconds
    # overloaded, ...; and timing figure -> why the machine's overload leaves it undecided.
    machine: dict[str, float | int]
    overloaded: dict[str, str]
    # A maximum's own window, as the check that measured it knows it (the longest
    # redelivery wait's, the most-behind record's): figure -> [[start_ms, end_ms], ...], for
    # the machine check's one-window rule (harness.results.overload_rules). Bookkeeping like
    # `undecided`: any check may add its figures' windows.
    timing_windows: dict[str, list[list[int]]]
    # The warm-up before the workload (spark_jobs/checks/warm_up.py, from `warm_up.end`):
    # settled, seconds, beside_checks_s, window_p99_ms, records, error; absent: run cold.
    warm_up: dict[str, object]
    lost_where: dict[str, int] | None  # LOST_PLACES -> lost records; adds up to lost
    lost_where_reasons: dict[str, int]  # why records are `unknown` -> how many
    lost_where_sample: list[LostPlace]
    broker_errors: int | None  # BROKER_LOG_METRICS
    voters_unexpected: int | None  # QUORUM_METRICS
    quorum: QuorumFigures
    broker_errors_by_template: list[BrokerLogTemplate]
    # Only when a check raised: check name -> the error (its figures are undecided).
    failed_checks: dict[str, str]


class IsrFigures(TypedDict):
    """The workload topic's ISR changes (summary "isr"); null: no partition.state event."""

    isr_shrinks: int | None  # events whose partition's ISR got smaller than its previous one
    isr_expands: int | None  # ... larger
    min_isr_size: int | None  # the smallest ISR seen
    under_replicated_s: float | None  # time some partition's ISR was smaller than its replicas
    failed_polls: int | None  # the watch's polls that failed (null: no partition.watch_end)


class Summary(Figures, total=False):
    """A cell's summary.json: its figures, then what the verdict adds (harness.verdict)."""

    cell: str
    params: dict[str, object]
    recovered: bool | None  # RECOVERED
    isr: IsrFigures
    checks: list[dict[str, str]]  # the verdict's checks: name, verdict, detail
    verdict: str
    duration_s: float
    timings: dict[str, float]  # seconds per phase, checks, total (harness.results.timings)
    margins: dict[str, float | None]  # ordered bound -> its margin (harness.verdict.margin)
