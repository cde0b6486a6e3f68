"""What the run side pays per record to turn DumpLogSegments' output into segments.parquet.

Broker forensics decode every captured copy (harness.runner.segment_tables): a final copy of
every broker at least, so a 5 M-record soak on three replicas prints some 15 M record lines,
each parsed and written in Python. This times, alternating, `--repeat` times, on synthetic
output in the tool's own line format (tests/unit/data/dump_log: a batch line every
`--batch` records, 40-byte values, keys `k<seq>`):
- lines: iterating the lines alone (the floor: what reading the output costs),
- parse: `parse_dump` over them (files and records, with each seq),
- tabulate: `tabulate`, parse plus both tables written (what a run does).
It prints CPU microseconds per record and what 15 M records would take at that rate.

Usage: python benchmarks/decode_throughput.py [--records 500000] [--repeat 3] [--batch 100]
       [--out benchmarks/results/decode_throughput.md]

To compare two versions of the harness in one run, point PYTHONPATH at the other checkout:
`PYTHONPATH=../other python benchmarks/decode_throughput.py` imports its harness instead.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # after PYTHONPATH: another checkout given there wins

from harness.cluster.segment_capture import Capture  # noqa: E402
from harness.runner.dump_log import parse_dump  # noqa: E402
from harness.runner.segment_tables import tabulate  # noqa: E402

LABEL = "1-collect-kafka-1"
PARTITIONS = 6
SOAK_RECORDS = 15_000_000  # high-volume: 5 M records on three replicas


def dump_lines(records: int, batch: int, partitions: int = PARTITIONS) -> Iterator[str]:
    """DumpLogSegments' output for `records` records over `partitions` partitions."""
    per = records // partitions
    for p in range(partitions):
        yield f"Dumping /segments/{LABEL}/chaos-{p}/00000000000000000000.log"
        yield "Log starting offset: 0"
        for offset in range(per):
            if offset % batch == 0:
                yield (
                    f"baseOffset: {offset} lastOffset: {offset + batch - 1} count: {batch} "
                    "baseSequence: 0 lastSequence: 99 producerId: 1 producerEpoch: 0 "
                    "partitionLeaderEpoch: 0 isTransactional: false isControl: false "
                    "deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1795580183935 "
                    "size: 4000 magic: 2 compresscodec: none crc: 2174395025 isvalid: true"
                )
            seq = offset * partitions + p
            yield (
                f"| offset: {offset} CreateTime: 1795580183935 keySize: {len(str(seq)) + 1} "
                f"valueSize: 40 sequence: {offset} headerKeys: [] key: k{seq} "
                f"payload: {seq:020d}|{'x' * 19}"
            )


def timed(work: Callable[[], int]) -> tuple[float, int]:
    """CPU seconds of this process (not wall time: these machines are shared, and the work
    is one thread's), and what the work returned."""
    t0 = time.process_time()
    n = work()
    return time.process_time() - t0, n


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.records < PARTITIONS or args.repeat < 1 or args.batch < 1:
        parser.error(f"--records must be at least {PARTITIONS}, --repeat and --batch at least 1")
    captures = [Capture(LABEL, "kafka-1", "collect", 0, True)]
    times: dict[str, list[float]] = {"lines": [], "parse": [], "tabulate": []}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / LABEL).mkdir()

        def lines() -> int:
            return sum(1 for _ in dump_lines(args.records, args.batch))

        def parse() -> int:
            return sum(1 for _ in parse_dump(dump_lines(args.records, args.batch)))

        def table() -> int:
            src = dump_lines(args.records, args.batch)
            return tabulate(src, captures, root / "s.parquet", root / "l.parquet", root)

        expected = args.records // PARTITIONS * PARTITIONS
        for _ in range(args.repeat):
            for name, work in (("lines", lines), ("parse", parse), ("tabulate", table)):
                seconds, n = timed(work)
                if name == "tabulate" and n != expected:
                    raise SystemExit(f"tabulate wrote {n} records, expected {expected}")
                times[name].append(seconds)
    load = os.getloadavg()[0]
    rows = [
        "| step | CPU us per record (median; min-max) | 15 M records at the median |",
        "|---|---:|---:|",
    ]
    for name, values in times.items():
        per = [v / expected * 1e6 for v in values]
        median = statistics.median(per)
        rows.append(
            f"| {name} | {median:.2f} ({min(per):.2f}-{max(per):.2f}) | "
            f"{median * SOAK_RECORDS / 1e6:.0f} s |"
        )
    import harness

    where = Path(harness.__file__).resolve().parent
    shown = where.relative_to(ROOT) if where.is_relative_to(ROOT) else where
    text = "\n".join(
        [
            f"decode throughput: {expected:,} records, {args.repeat} rounds alternating, "
            f"load1 {load:.1f} at the end, harness from {shown}",
            "",
            *rows,
            "",
        ]
    )
    print(text)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
