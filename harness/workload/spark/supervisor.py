"""A Spark Structured Streaming query as a consumer set: one process, crashed with SIGKILL.

The process (harness.workload.spark.member) runs in its own session; pyspark starts the JVM as
its child, so a crash kills the whole process group — the JVM dies mid-batch exactly as a
killed executor would, with no shutdown hook committing anything. Progress is read from the
query's checkpoint (how far the sink is committed); what it consumed is collected from the
file sink's commit log.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from harness.common.processes import ManagedProcess
from harness.results.checkpoint import committed_end, sink_files
from harness.results.history import History
from harness.results.member_files import MemberPaths, not_started, read_events
from harness.results.tables import CONSUMED
from harness.spec.consumers import SparkConsumerSpec
from harness.workload.member_process import member_command
from harness.workload.runtime import Runtime
from harness.workload.spark.member import query_paths

STOP_GRACE_S = 60.0


class SparkSupervisor:
    member_module = "harness.workload.spark.member"

    def __init__(
        self, set_name: str, spec: SparkConsumerSpec, runtime: Runtime, history: History
    ) -> None:
        self.set_name = set_name
        self.spec = spec
        self.runtime = runtime
        self.directory = runtime.directory  # the cell's consumers/ (events, stderr, generation)
        self.query = query_paths(runtime, set_name)
        self.history = history
        self.directory.mkdir(parents=True, exist_ok=True)
        self.name = f"{set_name}/q"
        self.names = [self.name]
        self.paths = MemberPaths(self.directory, self.name)
        self.proc: ManagedProcess | None = None
        self.exited_reported = False
        self._end: dict[int, int] = {}

    def member(self, index: int) -> str:
        if index != 0:
            raise ValueError(f"{self.set_name} is one streaming query: index 0, not {index}")
        return self.name

    def _command(self) -> list[str]:
        return member_command(self.member_module, self.spec, self.runtime, self.name)

    def start(self, name: str | None = None) -> None:
        """Start the query; without a name only if it never ran (one that stopped by itself,
        e.g. on a data-loss error, stays stopped: restarting it would fail the same way)."""
        if self.proc is not None and (name is None or self.proc.running):
            return
        self.proc = ManagedProcess(self._command(), self.paths.stderr).start()
        self.exited_reported = False
        self.history.append("consumer.launch", consumer=self.name, pid=self.proc.pid)

    def crash(self, name: str, index: int | None = None) -> None:
        """SIGKILL the process group: the Python driver and its JVM, mid-batch."""
        if self.proc is None or not self.proc.running:
            planned = {} if index is None else {"index": index}
            self.history.append("consumer.crash", consumer=name, note="was not running", **planned)
            return
        self.proc.kill()
        self.exited_reported = True
        self.history.append(
            "consumer.crash",
            consumer=name,
            pid=self.proc.pid,
            **({} if index is None else {"index": index}),
        )

    def stop(self) -> None:
        """SIGTERM the driver (it stops the query), SIGKILL the group after the grace period;
        anything left in its group (the JVM) goes too."""
        if self.proc is None:
            return
        if not self.proc.stop(STOP_GRACE_S):
            self.history.append(
                "consumer.crash", consumer=self.name, note="did not stop on SIGTERM"
            )

    @property
    def exited(self) -> bool:
        """The query's process ended by itself (failed query, lifetime bound)."""
        return self.proc is not None and self.proc.poll() is not None and not self.exited_reported

    def poll(self) -> None:
        with contextlib.suppress(OSError, ValueError):  # an entry being written: next poll
            self._end = committed_end(self.query.checkpoint, self.runtime.topic)
        if self.exited:
            assert self.proc is not None
            self.exited_reported = True
            self.history.append("consumer.exit", consumer=self.name, code=self.proc.returncode)

    @property
    def rows(self) -> int:
        return sum(self._end.values())

    def unready(self) -> list[str]:
        """Until the query has run its first batch (the JVM takes seconds to start)."""
        events = read_events(self.paths)
        done = any(e["kind"] in ("spark.batch", "spark.query.failed") for e in events)
        return [] if done else [self.name]

    def not_started(self) -> dict[str, str]:
        """The query's process, if it says it could not be started: name -> why."""
        return not_started(self.directory, self.names)

    def lag(self, ends: dict[int, int]) -> dict[int, int]:
        """Records per partition past what the sink has committed; none once the query has
        stopped for good (it will never read them: the checks count them)."""
        self.poll()
        if self.proc is not None and self.proc.poll() is not None:
            return dict.fromkeys(ends, 0)
        return {p: max(0, end - self._end.get(p, 0)) for p, end in ends.items()}

    def consumed_tables(self) -> Iterator[pa.Table]:
        """The sink's committed rows (CONSUMED), a file at a time; `ts` is when the file
        holding the row was written."""
        sink = self.query.sink
        consumer = pa.scalar(self.name, pa.string())
        for f in sink_files(sink):
            table = pq.read_table(
                f.local(sink), columns=["seq", "partition", "offset", "generation"]
            )
            yield pa.table(
                {
                    "seq": table.column("seq").cast(pa.int64()),
                    "partition": table.column("partition").cast(pa.int32()),
                    "offset": table.column("offset").cast(pa.int64()),
                    "consumer": pa.repeat(consumer, table.num_rows),
                    "ts": pa.repeat(pa.scalar(f.modified_ms, pa.int64()), table.num_rows),
                    "generation": table.column("generation").cast(pa.int32()),
                },
                schema=CONSUMED,
            )

    def commits_tables(self) -> Iterator[pa.Table]:
        """A query commits to its checkpoint, not to Kafka: none."""
        return iter(())
