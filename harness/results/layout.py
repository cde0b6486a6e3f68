"""Where everything lives in a result folder (`results/<run-id>/`), named once.

```
<run>/spec.yaml, summary.json, summary.md, junit.xml, cells/<cell-id>/
<suite run>/suite.yaml, summary.json, summary.md, junit.xml, experiments/<run>/
<results>/history.parquet   one row per cell of every suite run (tables.FIGURE_HISTORY)
<results>/index.html        the latest suite run and what changed (harness.suite.index)
<cell>/history.jsonl, ledger.parquet, consumed.parquet, log.parquet, commits.parquet,
       output.parquet (a pipeline's), share.parquet (a share group's), metrics.parquet,
       machine.parquet (the machine: lag, load, containers' CPU),
       summary.json, report.html, clients.log, brokers/<node>.log,
       consumers/<set>-<member>.{consumed.csv,commits.csv,share.csv,events.jsonl,stderr.log},
       consumers/<set>.generation, spark/<set>/{sink,checkpoint}/,
       producer/p<k>.{sends.csv,acks.csv,txns.csv,events.jsonl,stderr.log}
```
"""

from __future__ import annotations

import os
import stat
import uuid
from dataclasses import dataclass
from pathlib import Path

from harness.results.member_files import MemberPaths
from harness.results.producer_files import PRODUCER_DIR

HISTORY = "history.jsonl"
LEDGER = "ledger.parquet"
CONSUMED = "consumed.parquet"
LOG = "log.parquet"
OUTPUT = "output.parquet"  # a pipeline's output topic, read at the end
COMMITS = "commits.parquet"
SHARE = "share.parquet"  # a share group's deliveries and acknowledgements (tables.SHARE)
METRICS = "metrics.parquet"  # Kafka's own metrics, scraped over the cell (tables.METRICS)
# The machine itself over the cell: scheduling lag, load, steal, each container's CPU
# (harness.results.machine); the sampler's raw CSV only while the cell runs.
MACHINE = "machine.parquet"
MACHINE_CSV = "machine.csv"
SUMMARY = "summary.json"
REPORT = "report.html"
CLIENTS_LOG = "clients.log"
BROKERS = "brokers"
CONSUMERS = "consumers"
SPARK = "spark"
# Broker forensics (harness.cluster.segment_capture): every captured copy's records, decoded
# with Kafka's DumpLogSegments, and each copy's partitions' offset ranges; the raw copies
# (segments/<capture>/<topic>-<partition>/*.log) only while decoding or when kept.
SEGMENTS = "segments.parquet"
SEGMENT_LOGS = "segment_logs.parquet"
SEGMENT_COPIES = "segments"
# The files of a cell a reader may want raw, in the order the report links them.
RAW_FILES = (SUMMARY, LEDGER, CONSUMED, LOG, COMMITS, OUTPUT, METRICS, MACHINE, HISTORY)

RUN_SPEC = "spec.yaml"
RUN_SUMMARY_MD = "summary.md"
RUN_JUNIT = "junit.xml"
CELLS = "cells"

SUITE_FILE = "suite.yaml"
EXPERIMENTS = "experiments"
CONFIRMATIONS = "confirm"  # a suite folder's re-runs of flipped cells (`--confirm-flips`)
FIGURE_HISTORY = "history.parquet"  # beside the run folders: results/history.parquet
RESULTS_INDEX = "index.html"  # beside them too: results/index.html
# `harness calibrate`'s folder: its runs' folders and, beside them, every bound's figures.
CALIBRATION = "calibration.json"


@dataclass(frozen=True)
class QueryPaths:
    """A Spark query's folder: its Parquet file sink and its checkpoint."""

    root: Path

    @property
    def sink(self) -> Path:
        return self.root / "sink"

    @property
    def checkpoint(self) -> Path:
        return self.root / "checkpoint"


def query_dir(cell_dir: Path, set_name: str) -> Path:
    """`<cell>/spark/<set>/` holds the query's `sink/` and `checkpoint/`."""
    return cell_dir / SPARK / set_name


@dataclass(frozen=True)
class CellPaths:
    """Every path of one cell folder."""

    root: Path

    @property
    def history(self) -> Path:
        return self.root / HISTORY

    @property
    def ledger(self) -> Path:
        return self.root / LEDGER

    @property
    def consumed(self) -> Path:
        return self.root / CONSUMED

    @property
    def log(self) -> Path:
        return self.root / LOG

    @property
    def commits(self) -> Path:
        return self.root / COMMITS

    @property
    def share(self) -> Path:
        return self.root / SHARE

    @property
    def output(self) -> Path:
        """A pipeline's output topic as the final read found it (tables.OUTPUT)."""
        return self.root / OUTPUT

    @property
    def metrics(self) -> Path:
        """Kafka's own metrics, scraped from its JMX exporters (tables.METRICS)."""
        return self.root / METRICS

    @property
    def machine(self) -> Path:
        """The machine over the cell (harness.results.machine.MACHINE_SCHEMA)."""
        return self.root / MACHINE

    @property
    def machine_csv(self) -> Path:
        """The sampler's rows while the cell runs (harness.common.machine_sampler)."""
        return self.root / MACHINE_CSV

    @property
    def segments(self) -> Path:
        """Every record of every captured broker copy (tables.SEGMENTS)."""
        return self.root / SEGMENTS

    @property
    def segment_logs(self) -> Path:
        """Each captured copy's partitions: log start, end, records (tables.SEGMENT_LOGS)."""
        return self.root / SEGMENT_LOGS

    @property
    def segment_copies(self) -> Path:
        """The raw copies of brokers' partition directories, before decoding."""
        return self.root / SEGMENT_COPIES

    @property
    def summary(self) -> Path:
        return self.root / SUMMARY

    @property
    def report(self) -> Path:
        return self.root / REPORT

    @property
    def clients_log(self) -> Path:
        return self.root / CLIENTS_LOG

    @property
    def brokers(self) -> Path:
        return self.root / BROKERS

    @property
    def consumers(self) -> Path:
        return self.root / CONSUMERS

    @property
    def producer(self) -> Path:
        """The producer's files (harness.results.producer_files): the process's incarnations,
        or the in-process producer's sends and acks (`p0`)."""
        return self.root / PRODUCER_DIR

    def member(self, consumer: str) -> MemberPaths:
        """The files of one consumer process (`group/m0`, `spark/q`)."""
        return MemberPaths(self.consumers, consumer)

    def query(self, set_name: str) -> QueryPaths:
        return QueryPaths(query_dir(self.root, set_name))

    def write_text(self, path: Path, text: str) -> None:
        """Write a file of the cell folder through `safe_write_text` (no symlink followed)."""
        safe_write_text(self.root, path, text)


@dataclass(frozen=True)
class _SummarisedFolder:
    """The files a run folder and a suite run folder both hold: summary.json, summary.md and
    junit.xml."""

    root: Path

    @property
    def summary(self) -> Path:
        return self.root / SUMMARY

    @property
    def summary_md(self) -> Path:
        return self.root / RUN_SUMMARY_MD

    @property
    def junit(self) -> Path:
        return self.root / RUN_JUNIT


@dataclass(frozen=True)
class RunPaths(_SummarisedFolder):
    """Every path of one run folder."""

    @property
    def spec(self) -> Path:
        return self.root / RUN_SPEC

    @property
    def cells(self) -> Path:
        return self.root / CELLS

    def cell(self, cell_id: str) -> CellPaths:
        return CellPaths(self.cells / cell_id)

    def cell_ids(self) -> list[str]:
        """The cells the folder holds, sorted (their ids begin with their number)."""
        if not self.cells.is_dir():
            return []
        return sorted(p.name for p in self.cells.iterdir() if p.is_dir())


@dataclass(frozen=True)
class SuitePaths(_SummarisedFolder):
    """Every path of one suite run folder: its own summaries and each experiment's run folder."""

    @property
    def suite(self) -> Path:
        """The suite as planned: its file, the experiment files the globs found, the axes."""
        return self.root / SUITE_FILE

    @property
    def experiments(self) -> Path:
        """Each experiment's run folder (`RunPaths`) goes here."""
        return self.root / EXPERIMENTS

    @property
    def confirmations(self) -> Path:
        """The run folders of the re-runs of flipped cells (`--confirm-flips`), one per
        experiment and re-run."""
        return self.root / CONFIRMATIONS


def figure_history(results_dir: Path) -> Path:
    """`<results>/history.parquet`: every suite run under `results_dir` appends to it."""
    return results_dir / FIGURE_HISTORY


def results_index(results_dir: Path) -> Path:
    """`<results>/index.html`: the latest suite run under `results_dir`, rewritten after each."""
    return results_dir / RESULTS_INDEX


# ---- guards: a result folder is input a user may hand us, not trusted -----------------------


class ResultFolderError(ValueError):
    """A result-folder path that must not be read or written: it leads out of its folder, or
    is not a regular file. This package is a leaf (no harness.errors): the commands turn it
    into a ConfigError (exit 2) naming the path."""


def inside(folder: Path, path: Path) -> Path:
    """`path` resolved (symlinks followed), or ResultFolderError when it leads out of `folder`: a path
    read from a summary (`../..`, absolute, a symlink) must not reach other files."""
    base = folder.resolve()
    target = (folder / path).resolve()
    if target != base and not target.is_relative_to(base):
        raise ResultFolderError(f"{folder / path}: leads out of {folder} (to {target}); refused")
    return target


def require_regular(path: Path, directory_ok: bool = False) -> None:
    """ResultFolderError unless `path` (if it exists) is a regular file (or, when allowed, a folder):
    a FIFO or a device in place of a result file would block a reader forever."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return
    if stat.S_ISREG(mode) or (directory_ok and stat.S_ISDIR(mode)):
        return
    raise ResultFolderError(
        f"{path}: not a regular file; a result folder holds only files and folders"
    )


def safe_write_text(folder: Path, path: Path, text: str) -> None:
    """Write `path` in `folder` atomically (temporary file, then rename). The rename replaces a
    symlink at `path` itself, so a link planted in a result folder never redirects a write to
    a file elsewhere; ResultFolderError when `path`'s folder leads out of `folder`."""
    inside(folder, path.parent)
    if path.is_dir() and not path.is_symlink():
        raise ResultFolderError(f"{path}: is a folder; expected a file to write")
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "x", encoding="utf-8") as f:  # "x": never through an existing link
            f.write(text)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
