"""The producer as a thread of the runner: the default, when nothing acts on the producer.

A thin face over the one core (harness.workload.producer.core), as the supervisor is for
the process: the same files (the sends and acks files of incarnation `p0`, so a run of
millions of records keeps counters in memory, not a row per record), its events straight
into the cell's history (the status line shows delivery errors as they come), librdkafka's
log lines into the cell's clients.log. `write` joins the files into ledger.parquet.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pyarrow as pa

from harness.common.client_log import CLIENT_LOGGER
from harness.results import events as ev
from harness.results.history import History
from harness.results.ledger_join import ledger_tables, write_ledger
from harness.results.tables import LEDGER, concat
from harness.spec.producer import ProducerSpec
from harness.workload.producer.core import ErrorBursts, ProducerCore
from harness.workload.runtime import Runtime

# A record still without a delivery report once the client is closed (its fate unknown).
UNREPORTED = "no delivery report before the producer closed"


class ProducerThread:
    """Sends records seq 0, 1, … at the spec's rate in a thread; one ledger row each, on disk
    (in `runtime.directory`: the cell's `producer/`)."""

    def __init__(self, spec: ProducerSpec, runtime: Runtime, history: History) -> None:
        self.history = history
        self.core = ProducerCore(
            spec,
            runtime,
            history.append,
            errors=ErrorBursts(history.append),
            client_logger=CLIENT_LOGGER,
        )
        self.files = self.core.paths
        self.crashed: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ledger-producer", daemon=True)

    @property
    def attempted(self) -> int:
        return self.core.attempted

    @property
    def acked(self) -> int:
        return self.core.acked

    @property
    def failed(self) -> int:
        return self.core.failed

    def warm(self) -> None:
        """The client made before the workload (ProducerCore.warm)."""
        self.core.warm()

    def start(self) -> ProducerThread:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def join(self, timeout: float | None = None) -> None:
        if self._thread.ident is not None:
            self._thread.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def _run(self) -> None:
        try:
            self.core.run(self._stop.is_set)
        except BaseException as exc:  # recorded for the runner: a crashed workload is `unknown`
            self.crashed = exc
            self.history.append(ev.PRODUCER_CRASH, error=repr(exc))
        except:  # noqa: E722 - confluent-kafka raises a KafkaError, no exception type
            error = sys.exc_info()[1]
            self.crashed = RuntimeError(repr(error))
            self.history.append(ev.PRODUCER_CRASH, error=repr(error))

    def _unreported(self) -> tuple[str, str | None]:
        """Status and error of a record without a report: pending while the client may still
        report it; unknown after, with why when the client closed (not when it crashed)."""
        if self.core.ended:
            return "unknown", UNREPORTED
        return ("pending" if self.running else "unknown"), None

    def ledger(self) -> pa.Table:
        """The ledger so far as a table (LEDGER): from the files, for tests and tools."""
        status, error = self._unreported()
        return concat(LEDGER, ledger_tables([self.files], error, status))

    @property
    def status(self) -> list[str]:
        """Each record's status so far, by seq (reads the files: a test's convenience)."""
        return self.ledger().column("status").to_pylist()  # type: ignore[no-any-return]

    @property
    def partition(self) -> list[int | None]:
        """Each record's partition so far, by seq (reads the files: a test's convenience)."""
        return self.ledger().column("partition").to_pylist()  # type: ignore[no-any-return]

    def write(self, path: Path) -> int:
        """The ledger as Parquet (call after join()), joined from the files."""
        if self._thread.ident is None:
            self.core.close()  # never started: nothing will write to them
        error = UNREPORTED if self.core.ended else None
        return write_ledger(path, [self.files], unreported_error=error)
