"""Spark's floor for the checks' questions on this machine: what one shuffle of a cell's
10 M rows costs, against every check of the same cell, in one JVM.

Every form of the checks found so far needs some full shuffles (docs/benchmarks.md): the
order check sorts each consumer's series (consumed, 10 M rows at 10 M records), the offsets
check groups every ledger, consumed and log row by (partition, offset) (30 M), the stall
pairs each record's ack with its first consumption by seq (ledger and consumed: 20 M), and
the send-order check sorts the ledger per partition (10 M): seven shuffles of 10 M rows. This measures, on a
synthetic cell (benchmarks/synthetic_cell.py) and alternating, `--repeat` times:
- scan: the columns the checks use, read from the three files (a count per file),
- shuffle: consumed's (partition, offset) read and shuffled by them, then counted,
- shuffle_sort: the same rows through a window (lag) per partition ordered by offset,
- verify_cell: every check of the cell (answers compared with the known ones).
The floor is scan + 7 shuffles (the sort is not counted in it, so it is a lower bound).

Usage: python benchmarks/verify_floor.py [--rows 10000000] [--repeat 3] [--master local[2]]
       [--out benchmarks/results/verify_floor.md]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic_cell import figures
from verify_throughput import emit, write_known_cell

SHUFFLES = 7  # of 10 M rows each at 10 M records: the module doc


def scan(spark: Any, cell: Path) -> None:
    columns = {
        "ledger": ["seq", "partition", "offset", "status", "send_ts", "ack_ts"],
        "consumed": ["consumer", "generation", "partition", "offset", "seq", "ts"],
        "log": ["partition", "offset", "seq"],
    }
    for name, cols in columns.items():
        spark.read.parquet(str(cell / f"{name}.parquet")).select(*cols).filter(
            "seq is not null"
        ).count()


def shuffle(spark: Any, cell: Path, sort: bool) -> None:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    rows = spark.read.parquet(str(cell / "consumed.parquet")).select("partition", "offset")
    if not sort:
        rows.repartition("partition", "offset").count()
        return
    # A window is a shuffle by its keys and a sort (a plain sort before a count would be
    # optimised away): the order check's shape, one series per partition here.
    previous = F.lag("offset").over(Window.partitionBy("partition").orderBy("offset"))
    rows.withColumn("back", F.col("offset") < previous).filter("back").count()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--master", default=None, help="Spark master (default local[2])")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.rows < 1000 or args.repeat < 1:
        parser.error("--rows must be at least 1000 (the synthetic cell) and --repeat at least 1")

    from spark_jobs.session import spark_session
    from spark_jobs.verify import shuffle_partitions, verify_cell

    spark = spark_session("kafka-chaos-bench-floor", master=args.master)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cell = Path(tmp) / "cell"
            known = write_known_cell(cell, args.rows)
            # verify_cell's own setting (it sets it again), so the shuffles run as its do.
            spark.conf.set("spark.sql.shuffle.partitions", str(shuffle_partitions(cell)))
            scan(spark, cell)  # warm the JVM once, untimed
            times: dict[str, list[float]] = {
                m: [] for m in ("scan", "shuffle", "shuffle_sort", "verify_cell")
            }
            for _ in range(args.repeat):
                for name in times:
                    t0 = time.perf_counter()
                    if name == "scan":
                        scan(spark, cell)
                    elif name.startswith("shuffle"):
                        shuffle(spark, cell, sort=name == "shuffle_sort")
                    else:
                        got = figures(verify_cell(spark, cell))
                        if got != known:
                            raise SystemExit(f"verify_cell answered {got}, expected {known}")
                    seconds = time.perf_counter() - t0
                    times[name].append(seconds)
                    print(f"{args.rows:>11,} {name:13} {seconds:7.2f} s", flush=True)
    finally:
        spark.stop()
    med = {name: statistics.median(t) for name, t in times.items()}
    floor = med["scan"] + SHUFFLES * med["shuffle"]
    table = "\n".join(
        [
            "| ledger rows | scan s | one shuffle s | one shuffle+sort s | floor s "
            "| verify_cell s | verify_cell / floor |",
            "|---:|---:|---:|---:|---:|---:|---:|",
            f"| {args.rows:,} | {med['scan']:.2f} | {med['shuffle']:.2f} "
            f"| {med['shuffle_sort']:.2f} | {floor:.1f} | {med['verify_cell']:.1f} "
            f"| {med['verify_cell'] / floor:.2f} |",
        ]
    )
    emit(table, args.out)


if __name__ == "__main__":
    main()
