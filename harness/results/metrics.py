"""The figures a cell's `summary.json` holds, as the checks write them and verdicts read them."""

from __future__ import annotations

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
    # Transactions and Jepsen's Kafka anomaly classes (spark_jobs/checks_txn.py).
    "aborted_read",
    "torn_transaction",
    "inconsistent_offsets",
    "poll_skip",
    "nonmonotonic_send",
    # A consume-transform-produce pipeline's output topic against its input
    # (spark_jobs/checks_pipeline.py); 0 in a cell without a pipeline.
    "output_duplicates",
    "output_lost",
    "output_aborted",
)
# Times in seconds, at the summary's top level.
TIME_METRICS = ("max_stall_s", "unavailable_s")
# Producer ack latency (ack_ts - send_ts of `ok` records) in ms, at the summary's top level:
# nearest-rank percentiles and the maximum over all of them; then the p99 of those sent while
# a fault window was open (fault.inject .. fault.heal) and of the others (a same-run baseline).
LATENCY_METRICS = (
    "ack_p50_ms",
    "ack_p99_ms",
    "ack_max_ms",
    "ack_p99_ms_faulted",
    "ack_p99_ms_steady",
)
# Figures of one Spark consumer set (summary "spark_by_set" -> set -> figure).
SPARK_FIGURES = ("read_twice", "sink_duplicates", "data_loss_stop", "consumed_then_lost")
# The Spark figures also summed over the Spark sets, at the summary's top level.
SPARK_METRICS = ("read_twice", "sink_duplicates")
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
}
# Whether the cluster healed in the recovery phase (true / false; null: never got there).
RECOVERED = "recovered"
