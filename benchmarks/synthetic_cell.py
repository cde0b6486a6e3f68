"""A synthetic cell folder of any size whose every figure is known by construction.

One producer wrote `rows` records (seq = send order, 6 partitions, offsets dense per
partition, 5 records per ms, acked 5 ms after the send) and stopped sending for
`PRODUCER_PAUSE_MS` a quarter of the way in. 0.1 % of the acked records are missing from the
final log (lost); 0.1 % are in it twice (the copy at the end of its partition). One group
member consumed every record the log kept at its place, 45 ms after its ack, until half
way; it was then replaced (generation 2) after `RESTART_GAP_MS`, resumed from the offsets
committed before the restart and so read the last 1 % again, then read the rest at the
same pace. The benchmark and the Spark-cluster test compare every figure `verify_cell`
gives with `known` here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from harness.results.tables import COMMITS, CONSUMED, LEDGER, LOG

PARTITIONS = 6
T0 = 1_700_000_000_000
ACK_MS = 5  # ack_ts - send_ts of every record
CONSUME_MS = 45  # a record is consumed this long after its ack (generation 1)
PRODUCER_PAUSE_MS = 5_000
RESTART_GAP_MS = 30_000
MEMBER = "group/m0"


def _write(path: Path, schema: pa.Schema, columns: dict[str, Any]) -> None:
    """Parquet with the contract's schema; columns not given are null."""
    n = len(next(iter(columns.values())))
    arrays = [
        pa.array(columns[f.name], f.type) if f.name in columns else pa.nulls(n, f.type)
        for f in schema
    ]
    pq.write_table(pa.Table.from_arrays(arrays, schema=schema), path)


def write_cell(cell: Path, rows: int, seed: int = 1) -> dict[str, Any]:
    """The cell's files; returns the figures known by construction (verify_cell's names)."""
    rng = np.random.default_rng(seed)
    cell.mkdir(parents=True, exist_ok=True)
    seq = np.arange(rows, dtype=np.int64)
    partition = (seq % PARTITIONS).astype(np.int32)
    offset = seq // PARTITIONS
    pause_at = rows // 4
    send = T0 + seq // 5 + np.where(seq >= pause_at, PRODUCER_PAUSE_MS, 0)
    ack = send + ACK_MS
    _write(
        cell / "ledger.parquet",
        LEDGER,
        {
            "seq": seq,
            "partition": partition,
            "offset": offset,
            "status": np.full(rows, "ok", dtype=object),
            "send_ts": send,
            "ack_ts": ack,
        },
    )
    del send

    lost = np.sort(rng.choice(rows, rows // 1000, replace=False))
    keep = np.ones(rows, dtype=bool)
    keep[lost] = False
    twice = np.sort(rng.choice(np.flatnonzero(keep), rows // 1000, replace=False))
    # The second copy of each goes after the last offset of its partition.
    last = np.array([offset[partition == p].max(initial=-1) for p in range(PARTITIONS)])
    twice_part = partition[twice]
    twice_offset = np.empty(len(twice), np.int64)
    for p in range(PARTITIONS):
        mine = twice_part == p
        twice_offset[mine] = last[p] + 1 + np.arange(int(mine.sum()))
    _write(
        cell / "log.parquet",
        LOG,
        {
            "seq": np.concatenate([seq[keep], twice]),
            "partition": np.concatenate([partition[keep], twice_part]),
            "offset": np.concatenate([offset[keep], twice_offset]),
        },
    )

    kept = seq[keep]
    kept_ack = ack[keep]
    del keep, ack
    half = len(kept) // 2
    reread = kept[half - len(kept) // 100 : half]
    gen1_ts = kept_ack[:half] + CONSUME_MS
    t1 = int(gen1_ts[-1])  # the last consumption before the restart
    resume = t1 + RESTART_GAP_MS
    gen2 = np.concatenate([reread, kept[half:]])
    gen2_ts = resume + np.arange(len(gen2), dtype=np.int64) // 5
    c_seq = np.concatenate([kept[:half], gen2])
    _write(
        cell / "consumed.parquet",
        CONSUMED,
        {
            "seq": c_seq,
            "partition": (c_seq % PARTITIONS).astype(np.int32),
            "offset": c_seq // PARTITIONS,
            "consumer": np.full(len(c_seq), MEMBER, dtype=object),
            "ts": np.concatenate([gen1_ts, gen2_ts]),
            "generation": np.concatenate(
                [np.ones(half, np.int32), np.full(len(gen2), 2, np.int32)]
            ),
        },
    )
    # Committed before the restart: the first re-read offset of each partition.
    commit_part = np.arange(PARTITIONS, dtype=np.int32)
    commit_offset = np.array(
        [(reread[reread % PARTITIONS == p]).min() // PARTITIONS for p in commit_part]
    )
    _write(
        cell / "commits.parquet",
        COMMITS,
        {
            "consumer": [MEMBER] * PARTITIONS,
            "partition": commit_part,
            "offset": commit_offset,
            "ts": np.full(PARTITIONS, t1 - 1, np.int64),
        },
    )

    end = int(gen2_ts[-1]) + 1000
    log_rows = int(rows - len(lost) + len(twice))
    written = {
        "ledger": rows,
        "consumed": len(c_seq),
        "consumed_by": {MEMBER: len(c_seq)},
        "commits": PARTITIONS,
        "log": log_rows,
    }
    # As a run writes it: the evidence check holds the tables to these counts.
    history = [
        {"ts": T0, "kind": "phase", "phase": "workload"},
        {"ts": end - 1, "kind": "producer.end", "attempted": rows, "acked": rows, "failed": 0},
        {"ts": end, "kind": "drain.end", "complete": True, "lag": {}},
        {"ts": end + 1, "kind": "log.read", "complete": True, "records": log_rows},
        {"ts": end + 2, "kind": "tables.written", **written},
    ]
    (cell / "history.jsonl").write_text("\n".join(json.dumps(e) for e in history) + "\n")
    # The longest stall: from the last consumption before the restart to the first new
    # record after it (the re-read ones are not progress); every other gap is <= 1 ms, or
    # 45 ms after the producer's pause.
    first_new = int(gen2_ts[len(reread)])
    # The ack gap of the producer's pause: last ack before it to the first after it.
    gap = int(T0 + pause_at // 5 + PRODUCER_PAUSE_MS) - int(T0 + (pause_at - 1) // 5)
    return {
        "attempted": rows,
        "acked": rows,
        "lost": len(lost),
        "duplicated": len(twice),
        "reprocessed": len(reread),
        "lost_never_consumed": len(lost),
        "unacked_present": 0,
        "out_of_order": 0,
        "inconsistent_offsets": 0,
        "poll_skip": 0,
        "nonmonotonic_send": 0,
        "max_stall_s": (first_new - t1) / 1000.0,
        "unavailable_s": gap / 1000.0,
        "ack_p99_ms": ACK_MS,
        "resumptions": PARTITIONS,  # one per partition, each exact, none skipped
        "reread": len(reread),
        "evidence_disagreements": 0,
    }


def figures(out: Mapping[str, Any]) -> dict[str, Any]:
    """The same figures from verify_cell's answer."""
    counts = out["counts"]
    resumed = out["resumptions"]
    return {
        **{
            k: counts[k]
            for k in (
                "attempted",
                "acked",
                "lost",
                "duplicated",
                "reprocessed",
                "lost_never_consumed",
                "unacked_present",
                "out_of_order",
                "inconsistent_offsets",
                "poll_skip",
                "nonmonotonic_send",
            )
        },
        "max_stall_s": out["max_stall_s"],
        "unavailable_s": out["unavailable_s"],
        "ack_p99_ms": out["ack_p99_ms"],
        "resumptions": sum(1 for r in resumed if r["exact"] and r["skipped"] == 0),
        "reread": sum(r["reread"] for r in resumed),
        "evidence_disagreements": len(out["evidence"]["disagreements"]),
    }
