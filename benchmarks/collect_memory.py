"""Peak memory and wall time of the collect step, the line readers against the columnar ones.

Synthesises the CSV files of one cell with N records, as a killed and restarted
transactional producer process and a two-member group leave them: `producer/p0.*` (killed:
torn last lines, its last transaction without an end) and `producer/p1.*`, delivery
reports out of order, a few failed (quoted error texts) and a few never reported;
`consumers/group-m{0,1}.{consumed,commits}.csv` (m0 killed mid-line, then re-reading its
last records in a new generation). Then each step runs in a child process of its own —
ledger.parquet, and consumed.parquet + commits.parquet — the old way (a Python object per
line: tests/unit/legacy_readers.py + write_table) and the new (write_ledger, write_tables
from the consumer set's tables). The child reports its peak RSS (VmHWM, imports
included) and the step's wall time; the parent checks that both ways wrote equal tables,
and kills a child past --max-rss-mib (RSS watched from /proc) or --timeout-s.

Usage: python benchmarks/collect_memory.py [--records 1000000 5000000] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's harness and tests, not an installed one

MEMBERS = ["group/m0", "group/m1"]
PARTITIONS = 6
RECORDS_PER_TXN = 100
MiB = 1024 * 1024


# --- the cell's files ---------------------------------------------------------------------------
def write_csv(path: Path, columns: dict[str, np.ndarray | pa.Array], torn: str = "") -> None:
    """Lines as the workload writes them: no header, a null as nothing, an error text quoted
    (it holds a comma); then a torn last line, if any."""
    texts = [pc.cast(pa.array(values), pa.string()) for values in columns.values()]
    lines = pc.binary_join_element_wise(*texts, ",", null_handling="replace", null_replacement="")
    lines = pc.binary_join_element_wise(lines, "", "\n")  # each line ends with "\n"
    with path.open("wb") as f:
        offsets, data = lines.buffers()[1:]
        ends = np.frombuffer(offsets, dtype=np.int32)[lines.offset : lines.offset + len(lines) + 1]
        f.write(memoryview(data)[ends[0] : ends[-1]])
        f.write(torn.encode())


def synthesise(cell: Path, n: int, seed: int = 1) -> None:
    rng = np.random.default_rng(seed)
    producer, consumers = cell / "producer", cell / "consumers"
    producer.mkdir(parents=True)
    consumers.mkdir(parents=True)
    seq = np.arange(n, dtype=np.int64)
    txn = seq // RECORDS_PER_TXN
    send_ts = 1_700_000_000_000 + seq // 100
    fate = rng.random(n)
    acked = fate >= 0.001  # 0.1 % never reported
    failed = (fate >= 0.001) & (fate < 0.002)  # 0.1 % failed
    partition = (seq % PARTITIONS).astype(np.int64)
    offset = seq // PARTITIONS
    cut = int(n * 0.6)  # p0 is killed after 60 % of the records, p1 sends the rest
    for name, part, torn in (("p0", slice(0, cut), True), ("p1", slice(cut, n), False)):
        s = seq[part]
        write_csv(
            producer / f"{name}.sends.csv",
            {"seq": s, "txn": txn[part], "send_ts": send_ts[part]},
            torn=f"{s[-1] + 1},{txn[part][-1]},17" if torn else "",
        )
        got = np.flatnonzero(acked[part])
        # Reports come back out of order: shuffled within blocks of 1,000.
        order = np.concatenate(
            [rng.permutation(got[i : i + 1000]) for i in range(0, len(got), 1000)]
        )
        fail = failed[part][order]
        write_csv(
            producer / f"{name}.acks.csv",
            {
                "seq": s[order],
                "partition": partition[part][order],
                "offset": pa.array(offset[part][order], mask=fail),
                "status": np.where(fail, "fail", "ok"),
                "ack_ts": send_ts[part][order] + 7,
                "error": pa.array(
                    np.full(len(order), '"Local: fenced, by a newer instance"'), mask=~fail
                ),
            },
            torn=f"{s[order][-1]},1,2,o" if torn else "",
        )
        txns = np.unique(txn[part])[: -1 if torn else None]  # the killed one never ended
        write_csv(
            producer / f"{name}.txns.csv",
            {
                "txn": txns,
                "outcome": np.where(txns % 10 == 9, "aborted", "committed"),
                "ts": 1_700_000_000_000 + txns,
                "error": pa.nulls(len(txns), pa.string()),
            },
        )
    for index, member in enumerate(MEMBERS):
        mine = np.flatnonzero(partition // (PARTITIONS // 2) == index)
        again = mine[-1000:] if index == 0 else mine[:0]  # m0 re-reads after its restart
        rows = np.concatenate([mine, again])
        stem = member.replace("/", "-")
        write_csv(
            consumers / f"{stem}.consumed.csv",
            {
                "seq": seq[rows],
                "partition": partition[rows],
                "offset": offset[rows],
                "ts": send_ts[rows] + 20,
                "generation": np.where(np.arange(len(rows)) < len(mine), 1, 2),
            },
            torn="12,3,4" if index == 0 else "",
        )
        commits = rows[::500]
        write_csv(
            consumers / f"{stem}.commits.csv",
            {
                "partition": partition[commits],
                "offset": offset[commits] + 1,
                "ts": send_ts[commits],
            },
        )


# --- one step, in a child ---------------------------------------------------------------------
def step(cell: Path, how: str, what: str) -> None:
    """Runs in the child: one collect step, the old or the new way, into cell/<how>/."""
    from harness.results.history import History
    from harness.results.ledger_join import write_ledger
    from harness.results.producer_files import incarnations
    from harness.results.tables import COMMITS, CONSUMED, LEDGER, write_table, write_tables
    from harness.spec.consumers import GroupConsumerSpec
    from harness.workload.group.supervisor import GroupSupervisor
    from harness.workload.runtime import Runtime
    from tests.unit import legacy_readers as legacy

    out = cell / how
    out.mkdir(exist_ok=True)
    imports_kib = _status_kib("self", "VmHWM")
    t0 = time.perf_counter()
    if what == "ledger" and how == "old":
        write_table(out / "ledger.parquet", LEDGER, legacy.ledger_columns(cell / "producer"))
    elif what == "ledger":
        write_ledger(out / "ledger.parquet", incarnations(cell / "producer"))
    elif how == "old":
        consumed, commits = legacy.collected(cell / "consumers", MEMBERS)
        write_table(out / "consumed.parquet", CONSUMED, consumed)
        write_table(out / "commits.parquet", COMMITS, commits)
    else:
        runtime = Runtime("-", "chaos", cell / "consumers", max_s=3600, seed=0)
        spec = GroupConsumerSpec(group="g", members=len(MEMBERS))
        group = GroupSupervisor("group", spec, runtime, History())
        write_tables(out / "consumed.parquet", CONSUMED, group.consumed_tables())
        write_tables(out / "commits.parquet", COMMITS, group.commits_tables())
    peak_kib = _status_kib("self", "VmHWM")
    print(f"RESULT {time.perf_counter() - t0:.1f} {peak_kib} {imports_kib}")


def measure(cell: Path, how: str, what: str, max_rss_mib: int, timeout_s: float) -> str:
    """`seconds | peak MiB` of one step in a fresh child (killed past the limits)."""
    argv = [sys.executable, __file__, "--step", how, what, str(cell)]
    t0 = time.perf_counter()
    child = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    verdict = ""
    while child.poll() is None:
        if _status_kib(str(child.pid), "VmRSS") > max_rss_mib * 1024:
            verdict = f"killed past {max_rss_mib:,} MiB"
        elif time.perf_counter() - t0 > timeout_s:
            verdict = f"killed after {timeout_s:.0f} s"
        if verdict:
            child.kill()
            child.wait()
            return f"{verdict} | -"
        time.sleep(0.05)
    output = child.stdout.read() if child.stdout else ""
    found = [line.split() for line in output.splitlines() if line.startswith("RESULT ")]
    if child.returncode != 0 or not found:
        return f"failed ({child.returncode}) | -"
    _, seconds, peak_kib, imports_kib = found[-1]
    peak, imports = int(peak_kib) / 1024, int(imports_kib) / 1024
    return f"{float(seconds):.1f} | {peak:,.0f} (+{peak - imports:,.0f})"


def _status_kib(pid: str, field: str) -> int:
    """A /proc/<pid>/status size in KiB. VmHWM (peak RSS) rather than getrusage's ru_maxrss:
    that one keeps, across exec, the RSS of the parent the child was forked from."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def same_tables(cell: Path) -> str:
    import pyarrow.parquet as pq

    names = ("ledger", "consumed", "commits")
    old, new = cell / "old", cell / "new"
    if not all((d / f"{n}.parquet").exists() for d in (old, new) for n in names):
        return "-"
    equal = all(
        pq.read_table(old / f"{n}.parquet").equals(pq.read_table(new / f"{n}.parquet"))
        for n in names
    )
    return "yes" if equal else "**NO**"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, nargs="+", default=[1_000_000, 5_000_000])
    parser.add_argument("--max-rss-mib", type=int, default=6 * 1024)
    parser.add_argument("--timeout-s", type=float, default=120)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--step", nargs=3, metavar=("HOW", "WHAT", "CELL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        how, what, cell = args.step
        step(Path(cell), how, what)
        return
    if max(args.records) > 5_000_000:
        parser.error("at most 5,000,000 records (memory and time on a shared machine)")
    rows = []
    for n in args.records:
        with tempfile.TemporaryDirectory(prefix="collect-memory-") as tmp:
            cell = Path(tmp)
            t0 = time.perf_counter()
            synthesise(cell, n)
            size = sum(p.stat().st_size for p in cell.rglob("*.csv")) / MiB
            print(f"{n:,} records: {size:,.0f} MiB of CSV in {time.perf_counter() - t0:.1f} s")
            steps = []
            for what in ("ledger", "consumers"):
                old, new = (
                    measure(cell, h, what, args.max_rss_mib, args.timeout_s) for h in ("old", "new")
                )
                steps.append(f"| {n:,} | {what} | {old} | {new} |")
                print(steps[-1], flush=True)
            same = same_tables(cell)
            rows += [f"{row} {same} |" for row in steps]
    lines = [
        "Collect: CSV files of a cell -> ledger.parquet, consumed.parquet + commits.parquet "
        f"(`python benchmarks/collect_memory.py --records {' '.join(map(str, args.records))}`; "
        f"{os.cpu_count()} CPUs). Peak RSS of the child doing the step, and in brackets what "
        "it grew by after its imports (the step's own memory).",
        "",
        "| records | step | old s | old peak MiB | new s | new peak MiB | same tables |",
        "|---:|---|---:|---:|---:|---:|---|",
        *rows,
    ]
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
