"""Per-partition acknowledgement timelines of one or more cells (an investigation aid).

For each cell folder: the broker faults from history.jsonl, then per partition of the
ledger the longest gap between consecutive acknowledgements (ok records, by ack_ts) that
overlaps the first fault, with its start and end relative to the fault's inject, the
acked / unknown / failed counts, and the same for all partitions together (what
`unavailable_s` measures). With --log, the librdkafka lines of clients.log that explain
idempotent-producer pauses (drain, epoch bump, PID, leader changes), timed against the
inject as well.

Usage: python benchmarks/ack_timeline.py CELL_DIR [CELL_DIR ...] [--log] [--gap-ms 1000]
A run folder (with cells/) may be given instead of a cell folder: every cell of it.
"""

from __future__ import annotations

import argparse
import json
import re
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import pandas as pd

# clients.log lines worth reading for an idempotent producer's pause (librdkafka debug
# contexts eos/msg/topic/broker; see docs/results.md, "clients.log").
LOG_PATTERNS = re.compile(
    r"DRAIN|BUMP|Bump|epoch|PID|GETPID|IDEMPSTATE|ERRSEQ|UNKPID|wait_drain|"
    r"drain|Disconnected|leader|Leader|TOPBRK|TOPPAR.*(PID|drain)|MSGTIMEOUT|timed out"
)


def faults(cell: Path) -> list[dict[str, Any]]:
    """Injects with their heal, in order (ms)."""
    out: dict[int, dict[str, Any]] = {}
    for line in (cell / "history.jsonl").read_text().splitlines():
        ev = json.loads(line)
        if ev["kind"] == "fault.inject":
            out[ev["fault_id"]] = {"target": ev.get("target"), "inject": ev["ts"], "heal": None}
        elif ev["kind"] == "fault.heal" and ev["fault_id"] in out:
            out[ev["fault_id"]]["heal"] = ev["ts"]
    return list(out.values())


def longest_gap(ack_ts: pd.Series, lo: int, hi: int, around: int) -> tuple[int, int]:
    """The longest gap between consecutive points of ack_ts and {lo, hi} that ends after
    `around` (the first fault's inject); (start, end) in ms."""
    pts = sorted({lo, hi, *(int(t) for t in ack_ts if lo <= t <= hi)})
    best = (around, around)
    for a, b in pairwise(pts):
        if b >= around and b - a > best[1] - best[0]:
            best = (a, b)
    return best


def gaps_over(ack_ts: pd.Series, lo: int, hi: int, gap_ms: int) -> list[tuple[int, int]]:
    """Gaps longer than gap_ms, (start, end) ms (their sum is the definition of
    unavailable_s when taken over all partitions)."""
    pts = sorted({lo, hi, *(int(t) for t in ack_ts if lo <= t <= hi)})
    return [(a, b) for a, b in pairwise(pts) if b - a > gap_ms]


def cell_dirs(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        out.extend(sorted(x for x in (p / "cells").iterdir()) if (p / "cells").is_dir() else [p])
    return out


def report(cell: Path, gap_ms: int, show_log: bool) -> None:
    led = pd.read_parquet(cell / "ledger.parquet")
    fs = faults(cell)
    lo, hi = int(led["send_ts"].min()), int(led["send_ts"].max())
    t0 = fs[0]["inject"] if fs else lo
    print(f"== {cell.name}")
    for f in fs:
        heal = f"{(f['heal'] - t0) / 1000:+.1f} s" if f["heal"] else "never"
        print(f"   fault {f['target']}: inject {(f['inject'] - t0) / 1000:+.1f} s, heal {heal}")
    ok = led[led["status"] == "ok"]
    print("   part   acked unknown fail  longest gap (s)  from → to (s after inject)  sum of gaps")
    rows = [
        (str(p), ok[ok["partition"] == p], led[led["partition"] == p])
        for p in sorted(led["partition"].dropna().unique())
    ]
    rows.append(("all", ok, led))
    for name, acked, mine in rows:
        a, b = longest_gap(acked["ack_ts"], lo, hi, t0)
        gaps = gaps_over(acked["ack_ts"], lo, hi, gap_ms)
        n_unknown = int((mine["status"] == "unknown").sum())
        n_fail = int((mine["status"] == "fail").sum())
        print(
            f"   {name:>4} {len(acked):7d} {n_unknown:7d} {n_fail:4d}  {(b - a) / 1000:12.1f}"
            f"     {(a - t0) / 1000:+7.1f} → {(b - t0) / 1000:+7.1f}"
            f"   {sum(y - x for x, y in gaps) / 1000:6.1f}: "
            + ", ".join(f"{(x - t0) / 1000:+.1f}..{(y - t0) / 1000:+.1f}" for x, y in gaps)
        )
    lat = (ok["ack_ts"] - ok["send_ts"]) / 1000
    print(f"   ack latency s: p50 {lat.median():.3f} max {lat.max():.1f}")
    if show_log and (cell / "clients.log").exists():
        print("   clients.log (producer, matching lines, s after inject):")
        for line in (cell / "clients.log").read_text(errors="replace").splitlines():
            if "producer" not in line or not LOG_PATTERNS.search(line):
                continue
            try:
                ts = datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp() * 1000
            except ValueError:
                continue
            print(f"   {(ts - t0) / 1000:+7.2f} {line[24:][:220]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cells", nargs="+", type=Path)
    ap.add_argument("--log", action="store_true", help="show matching clients.log lines")
    ap.add_argument("--gap-ms", type=int, default=1000)
    args = ap.parse_args()
    for cell in cell_dirs(args.cells):
        report(cell, args.gap_ms, args.log)


if __name__ == "__main__":
    main()
