"""`verify`: every check of a result folder re-run from its files alone (Jepsen's `analyze`).

Apart from the run side on purpose: `harness verify` loads no Docker and no Kafka client
(import-linter "judging-does-not-run", and tests/unit/test_cli.py times its imports)."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import yaml

from harness.errors import ConfigError
from harness.report import write_run_summary
from harness.results.layout import (
    EXPERIMENTS,
    SUITE_FILE,
    SUMMARY,
    CellPaths,
    ResultFolderError,
    RunPaths,
    require_regular,
)
from harness.spec import Cell, expand_cells, load_spec
from harness.verdict.cell_verdict import amend_timings, cell_params, gap_ms, summarize

EXIT_FOR_VERDICT = {"pass": 0, "fail": 1, "unknown": 3}


class SparkChecks:
    """One Spark session for every cell's checks (a suite's: every experiment's): the JVM start
    is paid once. `warm_up` starts it in the background, while the first cluster starts; a
    cell calls `ready` before its steady state, so no workload shares the machine with it.
    Its master: $KAFKA_CHAOS_SPARK_MASTER (`--spark-master`), else local[2]. `small_cells`:
    no cell it checks has more than spark_jobs.session.SMALL_CELL_ROWS ledger rows (its JVM
    then compiles with C1 only)."""

    def __init__(self, small_cells: bool = False) -> None:
        self.small_cells = small_cells
        self._spark: Any = None
        self._starting: threading.Thread | None = None

    def warm_up(self) -> None:
        """Start the session now, in a daemon thread (a failure there is left for `verify`,
        which starts the session again and reports what stops it)."""
        if self._spark is None and (self._starting is None or not self._starting.is_alive()):
            self._starting = threading.Thread(target=self._start, name="spark-warm-up", daemon=True)
            self._starting.start()

    def _start(self) -> None:
        with contextlib.suppress(Exception):
            from spark_jobs.session import spark_session

            self._spark = spark_session(small_cells=self.small_cells)

    def ready(self) -> None:
        """Until a warm-up under way has ended (from any thread: the checks' and a cell's)."""
        starting = self._starting
        if starting is not None:
            starting.join()

    def started(self) -> bool:
        """Whether `ready` would return at once (no warm-up under way)."""
        starting = self._starting
        return starting is None or not starting.is_alive()

    def verify(self, cell: Cell, cell_dir: Path) -> dict[str, Any]:
        """The cell's checks, then its summary.json and report; all of it is timed
        (`timings.checks`; a Spark session not started yet by `warm_up` starts here, and
        counts)."""
        t0 = time.monotonic()
        try:
            from spark_jobs.session import spark_session
            from spark_jobs.verify import verify_cell

            self.ready()
            if self._spark is None:
                self._spark = spark_session(small_cells=self.small_cells)
            metrics = verify_cell(self._spark, cell_dir, gap_ms(cell))
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            summary = summarize(cell, cell_dir, None, error, time.monotonic() - t0)
        else:
            summary = summarize(cell, cell_dir, metrics, checks_s=time.monotonic() - t0)
        # Measured again to the end of the cell's report, which summarize writes last.
        return amend_timings(summary, cell_dir, checks_s=time.monotonic() - t0)

    def close(self) -> None:
        """Stop the session; a warm-up still under way (Ctrl-C early) is not waited for: its
        JVM goes with this process."""
        if self._starting is not None and self._starting.is_alive():
            return
        if self._spark is not None:
            with contextlib.suppress(Exception):
                self._spark.stop()
            self._spark = None


@contextlib.contextmanager
def spark_checks(shared: SparkChecks | None = None, small: bool = False) -> Iterator[SparkChecks]:
    """A run's checks; `shared` (a suite's, for all its experiments) is used and left open.
    `small`: the cells it checks are small (`small_cells`)."""
    if shared is not None:
        yield shared
        return
    checks = SparkChecks(small_cells=small)
    try:
        yield checks
    finally:
        checks.close()


def small_cells(cells: Iterable[Cell], folders: Iterable[Path] = ()) -> bool:
    """Whether every cell plans, and every cell folder holds, SMALL_CELL_ROWS ledger rows at
    most (and there is at least one of either)."""
    from spark_jobs.session import SMALL_CELL_ROWS

    rows = [cell.spec.producer.planned_records for cell in cells]
    for folder in folders:
        ledger = CellPaths(folder).ledger
        try:
            rows.append(pq.ParquetFile(ledger).metadata.num_rows)
        except (OSError, ValueError):  # missing or damaged: the checks say so
            rows.append(0)
    return bool(rows) and max(rows) <= SMALL_CELL_ROWS


def _read_old_summary(paths: RunPaths) -> dict[str, Any]:
    """The run's summary.json before `verify` rewrites it, read before any check runs: a
    malformed one is a ConfigError naming it (never a crash after the cells were rewritten)."""
    path = paths.summary
    if not path.exists() and not path.is_symlink():
        return {}
    require_regular(path)
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not a JSON object: {exc}") from None
    if not isinstance(old, dict):
        raise ConfigError(f"{path}: expected a JSON object, found {type(old).__name__}")
    if not isinstance(old.get("cells", []), list):
        raise ConfigError(f"{path}: `cells` must be a list")
    planned = old.get("planned_cells")
    if planned is not None and not (
        isinstance(planned, list) and all(isinstance(c, str) for c in planned)
    ):
        raise ConfigError(f"{path}: `planned_cells` must be a list of cell ids")
    return old


def _suite_planned(run_dir: Path) -> list[str] | None:
    """The cells a suite planned for this run folder (`<suite>/experiments/<run>/`), from the
    suite's suite.yaml: run folders written before they recorded `planned_cells` themselves."""
    suite_dir = run_dir.parent.parent
    if run_dir.parent.name != EXPERIMENTS or not (suite_dir / SUITE_FILE).is_file():
        return None
    try:
        require_regular(suite_dir / SUMMARY)
        planned = yaml.safe_load((suite_dir / SUITE_FILE).read_text(encoding="utf-8"))
        summary = json.loads((suite_dir / SUMMARY).read_text(encoding="utf-8"))
    except (OSError, ValueError, yaml.YAMLError):  # ResultFolderError is a ValueError
        return None
    if not isinstance(planned, dict) or not isinstance(summary, dict):
        return None
    files = [
        e.get("file")
        for e in summary.get("experiments") or []
        if isinstance(e, dict) and Path(str(e.get("run_dir"))).name == run_dir.name
    ]
    for e in planned.get("experiments") or []:
        if isinstance(e, dict) and files and e.get("file") == files[0]:
            return [str(c) for c in e.get("cells") or []]
    return None


def missing_cell(cell: Cell, old: dict[str, Any] | None) -> dict[str, Any]:
    """A planned cell whose folder is not in the run folder: `unknown`, never left out."""
    was = f" (the run summary said {old.get('verdict')})" if old else ""
    detail = f"its folder cells/{cell.id} is missing from the run folder{was}"
    return {
        "cell": cell.id,
        "params": cell_params(cell),
        "verdict": "unknown",
        "counts": {},
        "checks": [{"name": "present", "verdict": "unknown", "detail": detail}],
        "duration_s": None,
    }


def verify_run(run_dir: Path) -> dict[str, Any]:
    """Re-run every check of a result folder from its files alone (Jepsen's `analyze`).

    The folder is judged against what the run planned (its summary's `planned_cells`; else,
    in a suite folder, the suite's plan; else every cell of its spec.yaml): a planned cell
    without its folder is `unknown` and listed in `missing_cells`, so evidence that went
    missing can never leave a shorter summary that passes.
    ConfigError when the folder is not a result folder, its spec.yaml does not hold its cells
    or its summary.json is malformed (checked before any check runs or file is rewritten), and
    when a file of it is not a regular file or a write would leave it (a symlink).
    """
    try:
        return _verify_run(run_dir)
    except ResultFolderError as exc:
        raise ConfigError(str(exc)) from None


def _verify_run(run_dir: Path) -> dict[str, Any]:
    paths = RunPaths(run_dir)
    if not paths.spec.exists():
        raise ConfigError(f"{run_dir} is not a result folder: it has no spec.yaml")
    require_regular(paths.spec)
    old = _read_old_summary(paths)
    spec = load_spec(paths.spec, programs=False)  # its program need not be on this machine
    expanded = expand_cells(spec, str(paths.spec))
    cells = {c.id: c for c in expanded}
    present = paths.cell_ids()
    unknown = [c for c in present if c not in cells]
    if unknown:
        raise ConfigError(f"cells {unknown} of {run_dir} are not cells of its spec.yaml")
    planned = old.get("planned_cells")
    if planned is None:
        planned = _suite_planned(run_dir) or list(cells)
    strange = [c for c in planned if c not in cells]
    if strange:
        raise ConfigError(
            f"{paths.summary}: planned cells {strange} are not cells of its spec.yaml"
        )
    missing = [c for c in planned if c not in present]
    old_cells = {str(c.get("cell")): c for c in old.get("cells") or [] if isinstance(c, dict)}
    summaries = []
    small = small_cells((), [paths.cell(c).root for c in present])
    with spark_checks(small=small) as checks:
        for cell in expanded:  # the spec's order; cell ids begin with their number
            if cell.id in present:
                summaries.append(checks.verify(cell, paths.cell(cell.id).root))
            elif cell.id in missing:
                summaries.append(missing_cell(cell, old_cells.get(cell.id)))
    info = {k: old.get(k) for k in ("run_id", "started", "duration_s")}
    info.update(spec=spec.name, seed=spec.seed, run_id=old.get("run_id", run_dir.name))
    info.update(
        planned_cells=list(planned), cells_filter=old.get("cells_filter"), missing_cells=missing
    )
    return write_run_summary(run_dir, info, summaries)
