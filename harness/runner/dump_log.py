"""Kafka's own segment decoder (`kafka-dump-log.sh`), run from the broker image's jars, and
a parser of what it prints.

The image has the jars under /opt/kafka/libs but no bin scripts, so the class is run with
`java -cp`: `kafka.tools.DumpLogSegments` up to 3.9, `org.apache.kafka.tools.DumpLogSegments`
from 4.0 (moved to the tools module). With `--print-data-log --deep-iteration` both print,
per file, `Dumping <path>`, `Log starting offset: <base>`, a `baseOffset: ...` line per
batch (with `CreateTime:` or `LogAppendTime:`) and a `| offset: N ... payload: <value>` line
per record (a transaction marker has `endTxnMarker:` instead of a payload).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from harness.workload.records import SEQ_DIGITS, decode_seq

LIBS = "/opt/kafka/libs/*"
# The image's class-data-sharing archive (docker/cds-train.sh): the tool starts ~1 s sooner.
CDS_ARCHIVE = "/opt/kafka/kafka-chaos.jsa"
_DUMPING = re.compile(r"^Dumping (\S+)")
_START = re.compile(r"^Log starting offset: (-?\d+)")
_RECORD_START = "| offset: "  # every record line, and only record lines, start so
_RECORD = re.compile(r"^\| offset: (\d+) (?:CreateTime|LogAppendTime|NoTimestampType): (-?\d+)")
_KEY = re.compile(r" key: (\S*) ")
_PAYLOAD = " payload: "  # the first one on the line: what follows it is the value


def dump_class(version: str) -> str:
    """DumpLogSegments' class in this Kafka version: the tools jar's from 4.3 (core's
    kafka.tools before; checked in the 4.0.2, 4.2.2 and 4.3.1 jars from Maven)."""
    major, minor = (int(part) for part in str(version).split(".")[:2])
    moved = (major, minor) >= (4, 3)
    return "org.apache.kafka.tools.DumpLogSegments" if moved else "kafka.tools.DumpLogSegments"


def dump_command(version: str, root: str, out: str) -> list[str]:
    """A shell command decoding every `.log` file under `root` in one JVM, its output into
    the file `out` (read back as one archive: through the engine's log driver, every line
    JSON-framed, the same output took twice as long)."""
    files = f"$(find {root} -name '*.log' -type f | sort | paste -sd, -)"
    script = (
        f'files={files}; : > {out}; [ -z "$files" ] && exit 0; '
        f"cds=; [ -s {CDS_ARCHIVE} ] && cds='-XX:SharedArchiveFile={CDS_ARCHIVE} -Xlog:cds=off'; "
        f"exec java -Xmx256m -XX:+UseSerialGC -XX:-UsePerfData $cds -cp '{LIBS}' "
        f"{dump_class(version)} "
        f'--files "$files" --print-data-log --deep-iteration > {out}'
    )
    return ["sh", "-c", script]


# Tuples, not dataclasses: a long run's copies hold tens of millions of records, and a frozen
# dataclass took 0.7-0.8 us more to make, each (timeit, load ~9).
class DumpedRecord(NamedTuple):
    file: str  # the segment file's path as the tool printed it
    offset: int
    timestamp: int
    seq: int | None  # from the payload (or the key, `k<seq>`); None: not a workload record


class DumpedFile(NamedTuple):
    file: str
    base_offset: int | None  # `Log starting offset`: the segment's base offset


def _payload_seq(line: str) -> int | None:
    """The seq the value begins with, read by `decode_seq` from the value's first SEQ_DIGITS
    characters only (found with `str.find`: a regex search and a copy of the whole value per
    record cost twice as much)."""
    at = line.find(_PAYLOAD)
    if at < 0:
        return None
    start = at + len(_PAYLOAD)
    return decode_seq(line[start : start + SEQ_DIGITS].encode())


def parse_dump(lines: Iterable[str]) -> Iterator[DumpedFile | DumpedRecord]:
    """The files and records of DumpLogSegments' output, in order; anything else (batch
    lines, log4j warnings, a partial batch's error) is skipped. A record line is tried
    first: nearly every line is one."""
    current: str | None = None
    for raw in lines:
        line = raw.rstrip("\n")
        if line.startswith(_RECORD_START):
            if current is None:
                continue
            m = _RECORD.match(line)
        else:
            m = _DUMPING.match(line)
            if m:
                current = m[1]
                continue
            if current is None:
                continue
            m = _START.match(line)
            if m:
                yield DumpedFile(current, int(m[1]))
            continue
        if m is None:
            continue
        seq = _payload_seq(line)
        if seq is None:
            key = _KEY.search(line)
            if key and key[1].startswith("k") and key[1][1:].isdigit():
                seq = int(key[1][1:])
        yield DumpedRecord(current, int(m[1]), int(m[2]), seq)
