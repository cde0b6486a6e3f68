"""Read a Structured Streaming checkpoint and file-sink commit log (plain Python, no Spark).

The checkpoint is the authority on where a query is: `offsets/<N>` is written when batch N
is planned (its end offsets), `commits/<N>` when it is done, `sources/0/0` holds the offsets
the query first started from. A restarted query re-runs the planned but uncommitted batch,
or plans N+1 from the end of the last committed one. The file sink's own log
`<sink>/_spark_metadata/<N>` names the files batch N added; files on disk that no entry
names were written by an attempt that died before its commit and are not part of the sink.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

Offsets = dict[int, int]  # partition -> offset


def _entry_lines(path: Path) -> list[str]:
    """The lines of a log entry after its version line (`v1`), tolerant of Spark's zero byte."""
    text = path.read_bytes().lstrip(b"\x00").decode("utf-8")
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or not lines[0].startswith("v"):
        raise ValueError(f"{path}: not a Spark log entry (no version line)")
    return lines[1:]


def _numbered(directory: Path) -> dict[int, Path]:
    """Entries named by a batch number; temporary and checksum files are ignored."""
    if not directory.is_dir():
        return {}
    return {int(p.name): p for p in directory.iterdir() if p.name.isdigit()}


def topic_offsets(raw: str, topic: str | None) -> Offsets:
    data: dict[str, dict[str, int]] = json.loads(raw)
    if topic is None:
        if len(data) != 1:
            raise ValueError(f"expected offsets of one topic, got {sorted(data)}")
        topic = next(iter(data))
    return {int(p): int(o) for p, o in data.get(topic, {}).items()}


@dataclass(frozen=True)
class PlannedBatch:
    batch: int
    timestamp_ms: int  # the batch's current_timestamp()
    end: Offsets


@dataclass(frozen=True)
class Checkpoint:
    """One look at a checkpoint folder: the offset log is read once per instance."""

    directory: Path
    topic: str | None = None

    def initial(self) -> Offsets | None:
        path = self.directory / "sources" / "0" / "0"
        if not path.exists():
            return None
        return topic_offsets(_entry_lines(path)[0], self.topic)

    def planned(self) -> dict[int, PlannedBatch]:
        return self._planned

    @cached_property
    def _planned(self) -> dict[int, PlannedBatch]:
        out = {}
        for batch, path in _numbered(self.directory / "offsets").items():
            lines = _entry_lines(path)
            meta: dict[str, Any] = json.loads(lines[0])
            out[batch] = PlannedBatch(
                batch, int(meta.get("batchTimestampMs", 0)), topic_offsets(lines[1], self.topic)
            )
        return out

    def committed(self) -> set[int]:
        return set(_numbered(self.directory / "commits"))

    def batch_range(self, batch: int) -> tuple[Offsets, Offsets] | None:
        """(start, end) offsets of a planned batch; None when the log does not hold it."""
        planned = self.planned()
        if batch not in planned:
            return None
        start = planned[batch - 1].end if batch - 1 in planned else self.initial()
        return (start or {}), planned[batch].end


@dataclass(frozen=True)
class SinkFile:
    batch: int
    path: str
    modified_ms: int

    def local(self, sink: Path) -> Path:
        """The file in `sink` itself: found by name, so a moved result folder still reads."""
        return sink / Path(self.path).name


def sink_files(sink: Path) -> list[SinkFile]:
    """Every file the sink's commit log names, with the batch that committed it."""
    out = []
    for batch, path in sorted(_numbered(sink / "_spark_metadata").items()):
        for line in _entry_lines(path):
            entry: dict[str, Any] = json.loads(line)
            if entry.get("action", "add") == "add":
                out.append(SinkFile(batch, str(entry["path"]), int(entry["modificationTime"])))
    return out


def orphan_files(sink: Path, committed: list[SinkFile] | None = None) -> list[Path]:
    """Parquet files in the sink folder that no commit-log entry names (killed attempts).
    A kill can leave one empty or without its footer: see `readable`. `committed`: the
    sink's `sink_files`, when the caller has them already."""
    if not sink.is_dir():
        return []
    named = {f.local(sink).name for f in (sink_files(sink) if committed is None else committed)}
    return sorted(
        p for p in sink.glob("*.parquet") if p.name not in named and not p.name.startswith(".")
    )


def readable(path: Path) -> bool:
    """Whether a Parquet file is whole (a writer killed mid-file leaves no footer)."""
    try:
        pq.ParquetFile(path).close()
    except (OSError, ValueError, pa.ArrowException):
        return False
    return True


def committed_end(checkpoint: Path, topic: str | None = None) -> Offsets:
    """End offsets of the last committed batch (empty before the first commit): how far the
    query has delivered to its sink. Reads two entries, so it is cheap enough to poll."""
    committed = _numbered(checkpoint / "commits")
    if not committed:
        return {}
    offsets = _numbered(checkpoint / "offsets")
    both = set(committed) & set(offsets)
    if not both:
        return {}
    return topic_offsets(_entry_lines(offsets[max(both)])[1], topic)
