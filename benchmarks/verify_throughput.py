"""Verification throughput: the Spark checks against a plain pandas count, same data, same process.

A synthetic cell of N ledger rows (6 partitions; 0.1 % of acked records missing from the log,
0.1 % written twice, one consumer set that re-reads 1 % after a restart) is written once as
the contract Parquet files. Then, alternating, `--repeat` times:
- spark_counts: the Spark checks' lost and duplicated counts (checks_records),
- spark_all: every check of the cell (`verify_cell`: counts, resumptions, stalls, …),
- pandas_counts: a straightforward pandas version of the lost/duplicated counts (the
  baseline only; not a second implementation in the product).
Throughput is ledger rows per second of wall time, median of the repeats; reading the files
is inside each timing. The answers are compared, so a fast wrong baseline cannot win.

Usage: python benchmarks/verify_throughput.py [--rows 1000000 10000000] [--repeat 3]
       [--out benchmarks/results/verify_throughput.md]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from harness.results.tables import CONSUMED, LEDGER, LOG, write_table

PARTITIONS = 6
T0 = 1_700_000_000_000


def write_cell(cell: Path, rows: int, seed: int = 1) -> dict[str, int]:
    """The cell's files; returns the answers known by construction."""
    rng = np.random.default_rng(seed)
    cell.mkdir(parents=True, exist_ok=True)
    seq = np.arange(rows, dtype=np.int64)
    partition = (seq % PARTITIONS).astype(np.int32)
    offset = seq // PARTITIONS
    send = T0 + seq // 5  # 5000 records/s
    ack = send + 5
    write_table(  # the columns not given (a transactional producer's) are null
        cell / "ledger.parquet",
        LEDGER,
        {
            "seq": seq,
            "key": pa.array([None] * rows, pa.string()),
            "partition": partition,
            "offset": offset,
            "status": pa.array(np.full(rows, "ok", dtype=object), pa.string()),
            "error": pa.array([None] * rows, pa.string()),
            "send_ts": send,
            "ack_ts": ack,
        },
    )
    lost = rng.choice(rows, rows // 1000, replace=False)
    keep = np.ones(rows, dtype=bool)
    keep[lost] = False
    twice = rng.choice(np.flatnonzero(keep), rows // 1000, replace=False)
    log_seq = np.concatenate([seq[keep], seq[twice]])
    write_table(  # committed is null: visible, as a non-transactional producer's records are
        cell / "log.parquet",
        LOG,
        {
            "seq": log_seq,
            "partition": (log_seq % PARTITIONS).astype(np.int32),
            "offset": np.arange(len(log_seq), dtype=np.int64),
        },
    )
    consumed_seq = seq[keep]
    restart = len(consumed_seq) // 2
    reread = consumed_seq[restart - len(consumed_seq) // 100 : restart]
    c_seq = np.concatenate([consumed_seq[:restart], reread, consumed_seq[restart:]])
    generation = np.concatenate(
        [np.ones(restart, np.int32), np.full(len(c_seq) - restart, 2, np.int32)]
    )
    pq.write_table(
        pa.table(
            {
                "seq": c_seq,
                "partition": (c_seq % PARTITIONS).astype(np.int32),
                "offset": c_seq // PARTITIONS,
                "consumer": pa.array(np.full(len(c_seq), "group/m0", dtype=object), pa.string()),
                "ts": T0 + c_seq // 5 + 50,
                "generation": generation,
            },
            schema=CONSUMED,
        ),
        cell / "consumed.parquet",
    )
    end = int(T0 + rows // 5 + 1000)
    history = [
        {"ts": T0, "kind": "phase", "phase": "workload"},
        {"ts": end, "kind": "drain.end", "complete": True, "lag": {}},
        {"ts": end + 1, "kind": "log.read", "complete": True, "records": len(log_seq)},
    ]
    (cell / "history.jsonl").write_text("\n".join(json.dumps(e) for e in history) + "\n")
    return {"lost": len(lost), "duplicated": len(twice)}


def pandas_counts(cell: Path) -> dict[str, int]:
    """Baseline: acked seqs missing from the log; seqs the log holds more than once."""
    ledger = pd.read_parquet(cell / "ledger.parquet", columns=["seq", "status"])
    log = pd.read_parquet(cell / "log.parquet", columns=["seq"])
    acked = ledger.loc[ledger["status"] == "ok", "seq"]
    lost = int((~acked.isin(log["seq"])).sum())
    counts = log["seq"].value_counts()
    return {"lost": lost, "duplicated": int((counts > 1).sum())}


def spark_counts(spark: Any, cell: Path) -> dict[str, int]:
    from spark_jobs import checks_records as cr
    from spark_jobs.cell_data import read_cell

    data = read_cell(spark, cell)
    assert data.ledger is not None and data.log is not None
    return {
        "lost": cr.lost_records(data.ledger, data.log).count(),
        "duplicated": cr.duplicated_records(data.log).count(),
    }


def spark_all(spark: Any, cell: Path) -> dict[str, int]:
    from spark_jobs.verify import verify_cell

    counts = verify_cell(spark, cell)["counts"]
    return {"lost": counts["lost"], "duplicated": counts["duplicated"]}


def timed(fn: Callable[[], dict[str, int]]) -> tuple[float, dict[str, int]]:
    t0 = time.perf_counter()
    answer = fn()
    return time.perf_counter() - t0, answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    from spark_jobs.session import local_session

    spark = local_session("kafka-chaos-bench-verify")
    lines = [
        "| ledger rows | method | median s | rows/s | speed vs pandas (x) |",
        "|---:|---|---:|---:|---:|",
    ]
    try:
        for rows in args.rows:
            with tempfile.TemporaryDirectory() as tmp:
                cell = Path(tmp) / "cell"
                truth = write_cell(cell, rows)
                methods: dict[str, Callable[[], dict[str, int]]] = {
                    "pandas_counts": partial(pandas_counts, cell),
                    "spark_counts": partial(spark_counts, spark, cell),
                    "spark_all": partial(spark_all, spark, cell),
                }
                times: dict[str, list[float]] = {m: [] for m in methods}
                spark_counts(spark, cell)  # warm the JVM once, untimed
                for _ in range(args.repeat):
                    for name, fn in methods.items():
                        seconds, answer = timed(fn)
                        if answer != truth:
                            raise SystemExit(f"{name} answered {answer}, expected {truth}")
                        times[name].append(seconds)
                        print(f"{rows:>11,} {name:14} {seconds:8.2f} s", flush=True)
                base = statistics.median(times["pandas_counts"])
                for name in methods:
                    med = statistics.median(times[name])
                    lines.append(
                        f"| {rows:,} | {name} | {med:.2f} | {rows / med:,.0f} | {base / med:.2f} |"
                    )
    finally:
        spark.stop()
    table = "\n".join(lines)
    print(table)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(table + "\n")


if __name__ == "__main__":
    main()
