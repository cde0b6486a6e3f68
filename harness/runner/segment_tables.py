"""Broker forensics, second half of the run side: decode every captured copy with Kafka's
own DumpLogSegments (one throwaway container of the cell's image, one JVM for all copies)
into segments.parquet (a row per record) and segment_logs.parquet (a row per partition of
each copy). The raw copies are deleted afterwards unless the spec keeps them.
"""

from __future__ import annotations

import io
import shutil
import tarfile
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import docker
import pyarrow as pa
import pyarrow.parquet as pq

from harness.cluster.segment_capture import Capture
from harness.nodes.images import image_tag
from harness.nodes.reaper import run_labels
from harness.results import events as ev
from harness.results.history import History
from harness.results.tables import SEGMENT_LOGS, SEGMENTS, write_table
from harness.runner.dump_log import DumpedFile, dump_command, parse_dump

MOUNT = "/segments"  # where the copies are put in the decoding container
DUMP_OUT = "/tmp/dump-log.txt"  # and where its output is written
BATCH_ROWS = 500_000


def _tar_of(root: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(root, arcname=MOUNT.strip("/"))
    return buffer.getvalue()


def _lines(chunks: Iterable[bytes]) -> Iterator[str]:
    rest = b""
    for chunk in chunks:
        rest += chunk
        *lines, rest = rest.split(b"\n")
        for line in lines:
            yield line.decode(errors="replace")
    if rest:
        yield rest.decode(errors="replace")


class _Chunks(io.RawIOBase):
    """The chunks of a stream (the engine's archive of a file) as a readable file."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self._rest = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._rest:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._rest = chunk
        n = min(len(buffer), len(self._rest))
        buffer[:n] = self._rest[:n]
        self._rest = self._rest[n:]
        return n


def run_dump(root: Path, version: str, run_id: str) -> Iterator[str]:
    """DumpLogSegments' output over every `.log` under `root`, line by line (a container
    created, fed with the copies, run and removed: no bind mount, no network; its output
    written to a file there and streamed back as an archive, never all in memory)."""
    client = docker.from_env()
    container = client.containers.create(
        image_tag(version),
        entrypoint=dump_command(version, MOUNT, DUMP_OUT),
        labels=run_labels(run_id),
        network_mode="none",
        name=f"kc-{run_id}-dump-log",
    )
    try:
        container.put_archive("/", _tar_of(root))
        container.start()
        result = container.wait(timeout=600)
        if int(result.get("StatusCode", 1)) != 0:
            tail = container.logs(stdout=False, stderr=True, tail=5).decode(errors="replace")
            raise RuntimeError(f"DumpLogSegments exited {result.get('StatusCode')}: {tail}")
        chunks, _ = container.get_archive(DUMP_OUT)
        with tarfile.open(fileobj=io.BufferedReader(_Chunks(chunks)), mode="r|") as tar:
            member = tar.next()
            out = tar.extractfile(member) if member is not None else None
            if out is None:
                raise RuntimeError(f"DumpLogSegments left no {DUMP_OUT}")
            yield from _lines(iter(lambda: out.read(1 << 20), b""))
    finally:
        container.remove(force=True)


def _place(file: str) -> tuple[str, str, int] | None:
    """(capture label, topic, partition) of `/segments/<label>/<topic>-<p>/<base>.log`."""
    parts = file.split("/")
    if len(parts) < 4:
        return None
    label, directory = parts[-3], parts[-2]
    topic, _, p = directory.rpartition("-")
    return (label, topic, int(p)) if topic and p.isdigit() else None


class _Writer:
    """segments.parquet, written in batches (a long run's copies hold millions of records).
    A row is a tuple in SEGMENTS' column order, turned into columns once a batch: per record
    one tuple, not a keyword dict and eight appends (benchmarks/decode_throughput.py)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: list[tuple[Any, ...]] = []
        self.writer: pq.ParquetWriter | None = None
        self.total = 0

    def add(self, row: tuple[Any, ...]) -> None:
        self.rows.append(row)
        if len(self.rows) >= BATCH_ROWS:
            self.flush()

    def flush(self) -> None:
        columns = list(zip(*self.rows, strict=True)) or [() for _ in SEGMENTS]
        table = pa.table(
            {f.name: pa.array(c, f.type) for f, c in zip(SEGMENTS, columns, strict=True)}
        )
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.path, SEGMENTS)
        self.writer.write_table(table)
        self.total += table.num_rows
        self.rows.clear()

    def close(self) -> int:
        self.flush()  # an empty batch too: the file exists with its schema
        assert self.writer is not None
        self.writer.close()
        return self.total


def tabulate(
    lines: Iterable[str], captures: list[Capture], segments: Path, logs: Path, root: Path
) -> int:
    """Write both tables from DumpLogSegments' output; the records written."""
    by_label = {c.label: c for c in captures}
    starts: dict[tuple[str, str, int], int] = {}
    ends: dict[tuple[str, str, int], int] = {}
    counts: dict[tuple[str, str, int], int] = defaultdict(int)
    writer = _Writer(segments)
    # per segment file (a few hundred a run): its place, or None when it is not a capture's
    placed: dict[str, tuple[str, str, int] | None] = {}
    try:
        for item in parse_dump(lines):
            if item.file in placed:
                place = placed[item.file]
            else:
                place = _place(item.file)
                if place is not None and place[0] not in by_label:
                    place = None
                placed[item.file] = place
            if place is None:
                continue
            if isinstance(item, DumpedFile):
                if item.base_offset is not None:
                    starts[place] = min(starts.get(place, item.base_offset), item.base_offset)
                continue
            c = by_label[place[0]]
            counts[place] += 1
            end = item.offset + 1
            if end > ends.get(place, 0):
                ends[place] = end
            # in SEGMENTS' order: capture, node, ts, topic, partition, offset, seq, record_ts
            writer.add(
                (c.label, c.node, c.ts, place[1], place[2], item.offset, item.seq, item.timestamp)
            )
    finally:
        total = writer.close()
    rows: dict[str, list[Any]] = {f.name: [] for f in SEGMENT_LOGS}
    for c in captures:
        folder = root / c.label
        if not c.complete or not folder.is_dir():
            continue
        for directory in sorted(p for p in folder.iterdir() if p.is_dir()):
            topic, _, p = directory.name.rpartition("-")
            if not p.isdigit():
                continue
            key = (c.label, topic, int(p))
            size = sum(f.stat().st_size for f in directory.glob("*.log"))
            row = {
                "capture": c.label,
                "node": c.node,
                "reason": c.reason,
                "ts": c.ts,
                "topic": topic,
                "partition": int(p),
                "log_start": starts.get(key),
                "log_end": ends.get(key),
                "records": counts.get(key, 0),
                "bytes": size,
            }
            for name, values in rows.items():
                values.append(row[name])
    write_table(logs, SEGMENT_LOGS, rows)
    return total


def decode_captures(
    captures: list[Capture],
    root: Path,
    segments: Path,
    logs: Path,
    version: str,
    run_id: str,
    history: History,
    keep: bool = False,
) -> None:
    """Decode the copies under `root` into the two tables (recorded as `segments.decoded`);
    then delete the copies unless `keep`."""
    raw = sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) if root.is_dir() else 0
    fields: dict[str, Any] = {"captures": len(captures), "raw_bytes": raw, "kept": keep}
    try:
        if root.is_dir():
            records = tabulate(run_dump(root, version, run_id), captures, segments, logs, root)
        else:
            records = tabulate([], captures, segments, logs, root)
    except Exception as exc:  # the placement then says unknown, naming this
        error = f"{type(exc).__name__}: {exc}".splitlines()[0]
        keep = fields["kept"] = True  # what could not be decoded stays for a person to see
        history.append(ev.SEGMENTS_DECODED, **fields, complete=False, records=0, error=error)
        for path in (segments, logs):
            path.unlink(missing_ok=True)
    else:
        history.append(ev.SEGMENTS_DECODED, **fields, complete=True, records=records)
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
