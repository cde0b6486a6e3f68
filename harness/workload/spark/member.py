"""The Spark Structured Streaming consumer, its own process so the nemesis can SIGKILL it.

`python -m harness.workload.spark.member --spec SPARK_CONSUMER_SPEC_JSON --runtime RUNTIME_JSON
--consumer spark/q` (harness.workload.member_process)

Spark's own Kafka source (offsets live in the checkpoint, nothing in `__consumer_offsets`)
feeds a Parquet file sink: `<cell>/spark/<set>/sink` with `<cell>/spark/<set>/checkpoint`
(`query_paths`). Each row is
`seq, partition, offset, ts` (the batch's timestamp, ms) and the process's `generation`; the
batch id of a row is in the sink's commit log, which names every file of each batch (Spark
has no batch-id expression for a file sink). Every start is a new generation; at start the
process records where the checkpoint says it will resume (`spark.resume`), and every
finished batch is a `spark.batch` event with its offsets (from a StreamingQueryListener).
The checkpoint and sink logs keep every batch (no purge, no compaction) so checks can read
the whole run. SIGTERM stops the query cleanly; so do max_s and the runner's death. A query
that fails (e.g. Spark's data-loss error) is recorded as `spark.query.failed`, exit code 3.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from harness.results import events as ev
from harness.results.checkpoint import Checkpoint, topic_offsets
from harness.results.consumers import ConsumerRef
from harness.results.layout import QueryPaths, query_dir
from harness.results.member_files import EventLog, MemberPaths, next_generation
from harness.spec.consumers import SparkConsumerSpec
from harness.workload.member_process import parse_member_args, run_until_signalled
from harness.workload.records import SEQ_DIGITS
from harness.workload.runtime import Runtime

# Maven puts the connector beside the checks' Spark session (make setup: spark-jars).
JARS_DIR = Path(__file__).resolve().parents[3] / "spark_jobs" / "jars"
EXIT_QUERY_FAILED = 3
# Words of Spark's Kafka data-loss errors (error class KAFKA_DATA_LOSS, or the older text).
DATA_LOSS_MARKERS = ("KAFKA_DATA_LOSS", "failOnDataLoss", "Some data may have been lost")


def query_paths(runtime: Runtime, set_name: str) -> QueryPaths:
    """The query's sink and checkpoint, `<cell>/spark/<set>/`: the runtime's folder is the
    cell's `consumers/` (harness.results.layout), so the cell is its parent."""
    return QueryPaths(query_dir(runtime.directory.parent, set_name))


def is_data_loss(error: str) -> bool:
    return any(marker in error for marker in DATA_LOSS_MARKERS)


def connector_built() -> bool:
    """Whether Spark's Kafka connector is in JARS_DIR (`make spark-jars`)."""
    return any(j.name.startswith("spark-sql-kafka") for j in JARS_DIR.glob("*.jar"))


def connector_jars() -> list[Path]:
    if not connector_built():
        raise SystemExit(
            f"Spark's Kafka connector is missing from {JARS_DIR}; run `make setup` (spark-jars)"
        )
    return sorted(JARS_DIR.glob("*.jar"))


def resume_point(checkpoint: Checkpoint) -> dict[str, Any]:
    """Where the checkpoint says this start resumes: last committed batch and its end offsets,
    and the planned batch it will run again (if the last run died before committing it)."""
    planned = checkpoint.planned()
    committed = checkpoint.committed()
    last = max(committed, default=None)
    rerun = max(planned, default=None)
    if rerun is not None and rerun in committed:
        rerun = None
    end = planned[last].end if last is not None and last in planned else None
    return {
        "committed_batch": last,
        "committed_end": None if end is None else {str(p): o for p, o in sorted(end.items())},
        "rerun_batch": rerun,
    }


def _offsets_field(raw: str | None, topic: str) -> dict[str, int] | None:
    if not raw:
        return None
    try:
        return {str(p): o for p, o in sorted(topic_offsets(raw, topic).items())}
    except (ValueError, TypeError, AttributeError):
        return None


def make_listener(events: EventLog, topic: str, generation: int) -> Any:
    from pyspark.sql.streaming.listener import StreamingQueryListener

    class BatchLog(StreamingQueryListener):
        """Each finished batch, with the offsets it read, into the events file."""

        def onQueryStarted(self, event: Any) -> None:
            events(ev.SPARK_QUERY_STARTED, generation=generation, run_id=str(event.runId))

        def onQueryProgress(self, event: Any) -> None:
            p = event.progress
            source = p.sources[0] if p.sources else None
            events(
                ev.SPARK_BATCH,
                generation=generation,
                batch=int(p.batchId),
                rows=int(p.numInputRows),
                start=_offsets_field(source.startOffset if source else None, topic),
                end=_offsets_field(source.endOffset if source else None, topic),
                trigger_ms=int(p.durationMs.get("triggerExecution", 0)),
                batch_ts=p.timestamp,
            )

        def onQueryTerminated(self, event: Any) -> None:
            pass

    return BatchLog()


class SparkMember:
    def __init__(self, spec: SparkConsumerSpec, runtime: Runtime, name: str) -> None:
        self.spec = spec
        self.runtime = runtime
        self.name = name
        self.set_name = ConsumerRef.parse(name).set_name
        self.paths = MemberPaths(runtime.directory, name)
        self.events = EventLog(self.paths)
        self.stopping = False
        self.query = query_paths(runtime, self.set_name)
        self.checkpoint = self.query.checkpoint
        self.sink = self.query.sink

    def options(self) -> dict[str, str]:
        s = self.spec
        # Spark's own defaults otherwise. Not fetchOffset.numRetries: when the latest offset
        # went backwards Spark retries the listing that many times (1 s apart) before it
        # reports data loss, so a higher value lets a refilled log hide a truncation.
        opts = {k: str(v) for k, v in s.config.items()}
        opts.update(
            {
                "kafka.bootstrap.servers": self.runtime.bootstrap,
                "subscribe": self.runtime.topic,
                "startingOffsets": s.starting_offsets,
                "failOnDataLoss": str(s.fail_on_data_loss).lower(),
            }
        )
        if s.max_offsets_per_trigger:
            opts["maxOffsetsPerTrigger"] = str(s.max_offsets_per_trigger)
        return opts

    def run(self) -> int:
        generation = next_generation(self.runtime.directory, self.set_name)
        # The Java consumer's default; the source options may set kafka.isolation.level.
        isolation = self.options().get("kafka.isolation.level", ev.READ_UNCOMMITTED)
        self.events(ev.CONSUMER_START, pid=os.getpid(), generation=generation, isolation=isolation)
        self.query.root.mkdir(parents=True, exist_ok=True)
        resume = resume_point(Checkpoint(self.checkpoint, self.runtime.topic))
        self.events(ev.SPARK_RESUME, generation=generation, **resume)

        from pyspark.errors import StreamingQueryException
        from pyspark.sql import functions as F

        from spark_jobs.session import local_session

        spark = local_session(
            f"kafka-chaos-{self.name}",
            jars=connector_jars(),
            conf={
                # A task failing on a broker fault is retried (4 attempts, as on a cluster)
                # instead of failing the query at once as plain local[2] would.
                "spark.master": "local[2,4]",
                "spark.sql.shuffle.partitions": "2",
                # Keep every batch of the checkpoint and the sink log for the checks.
                "spark.sql.streaming.minBatchesToRetain": "1000000",
                "spark.sql.streaming.fileSink.log.compactInterval": "1000000",
                "spark.sql.streaming.fileSink.log.deletion": "false",
            },
        )
        spark.streams.addListener(make_listener(self.events, self.runtime.topic, generation))
        value = F.col("value").cast("string")
        rows = (
            spark.readStream.format("kafka")
            .options(**self.options())
            .load()
            .select(
                F.substring(value, 1, SEQ_DIGITS).cast("bigint").alias("seq"),
                F.col("partition"),
                F.col("offset"),
                F.unix_millis(F.current_timestamp()).alias("ts"),
                F.lit(generation).alias("generation"),
            )
            .where(F.col("seq").isNotNull())
        )
        query = (
            rows.writeStream.format("parquet")
            .option("path", str(self.sink))
            .option("checkpointLocation", str(self.checkpoint))
            .trigger(processingTime=f"{self.spec.trigger_ms} milliseconds")
            .start()
        )
        deadline = time.monotonic() + self.runtime.max_s
        parent = os.getppid()
        terminated = False
        failure: str | None = None
        while not self.stopping and time.monotonic() < deadline and os.getppid() == parent:
            try:
                if query.awaitTermination(1):
                    terminated = True
                    break
            except StreamingQueryException as exc:  # how a failed query's wait ends
                terminated, failure = True, str(exc)
                break
        if failure is None and query.exception() is not None:
            failure = str(query.exception())
        if failure is not None:
            self.events(
                ev.SPARK_QUERY_FAILED,
                generation=generation,
                data_loss=is_data_loss(failure),
                error=failure[:2000],
            )
            spark.stop()
            return EXIT_QUERY_FAILED
        if not terminated:
            query.stop()
        self.events(ev.CONSUMER_STOP, generation=generation)
        spark.stop()
        return 0


def main(argv: list[str] | None = None) -> None:
    args = parse_member_args(SparkConsumerSpec, sys.argv[1:] if argv is None else argv, __doc__)
    consumer = SparkMember(args.spec, args.runtime, args.name)
    sys.exit(run_until_signalled(consumer, consumer.run))


if __name__ == "__main__":
    main()
