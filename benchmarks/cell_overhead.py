"""What one cell costs, phase by phase, and what it does to the machine, variants side by side.

Runs a spec (default: benchmarks/specs/plain-cell.yaml, three KRaft brokers, no fault,
acks=all at 200 records/s) through `python -m harness run`, once per variant per round,
the variants interleaved (A B A B ...) so a drift of the machine hits both alike. A variant
is a name and environment settings for the harness process, e.g. `before:KAFKA_CHAOS_JVM_OPTS=`
(the JVM's own defaults instead of the entry point's tuned flags). Meanwhile a sampler
reads, once a second, the host's 1-minute load average and each cluster container's CPU
(cgroup v1 cpuacct, the containers named kc-*). Per run: seconds per phase (from the
cell's summary.json `timings`), load and broker CPU during the
workload, ack p50 / p99 of the steady window, the verdict. The table gives the median
and every run.

Usage: python benchmarks/cell_overhead.py [--spec S] [--repeat 3]
         [--variant NAME:VAR=VALUE[,VAR=VALUE...] ...] [--out benchmarks/results/cell_overhead.md]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

CGROUP = Path("/sys/fs/cgroup/cpuacct/docker")


@dataclass
class Sample:
    t_ms: int
    load: float
    cpu_ns: dict[str, int]  # container name -> cumulative CPU


@dataclass
class Run:
    variant: str
    timings: dict[str, float]  # the cell's summary.json `timings`
    wall_s: float  # the whole `harness run` process, per cell
    load: float  # median 1-min load average during the workload
    broker_cpu: float  # mean per-container CPU % during the workload
    ack_p50: float | None
    ack_p99: float | None
    verdict: str


def container_cpu() -> dict[str, int]:
    """Cumulative CPU ns of every running kc-* container (cgroup v1, cgroupfs driver)."""
    out: dict[str, int] = {}
    if not CGROUP.is_dir():
        return out
    names = subprocess.run(
        ["docker", "ps", "--no-trunc", "--filter", "name=kc-", "--format", "{{.ID}} {{.Names}}"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split("\n")
    for line in names:
        if not line.strip():
            continue
        cid, name = line.split(" ", 1)
        usage = CGROUP / cid / "cpuacct.usage"
        try:
            out[name] = int(usage.read_text())
        except OSError:
            continue
    return out


class Sampler(threading.Thread):
    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.samples: list[Sample] = []
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            load = float(Path("/proc/loadavg").read_text().split()[0])
            self.samples.append(Sample(int(time.time() * 1000), load, container_cpu()))
            self._halt.wait(1.0)

    def stop(self) -> list[Sample]:
        self._halt.set()
        self.join(5)
        return self.samples


def workload_window(history: Path) -> tuple[int, int]:
    """The workload phase's start and end (ms) in the cell's history."""
    events = [json.loads(line) for line in history.read_text().splitlines() if line.strip()]
    marks = [(e["ts"], e["phase"]) for e in events if e.get("kind") == "phase"]
    for (ts, name), nxt in zip(marks, [*marks[1:], (events[-1]["ts"], "")], strict=True):
        if name == "workload":
            return ts, nxt[0]
    return 0, 0


def during(samples: list[Sample], start: int, end: int) -> tuple[float, float]:
    inside = [s for s in samples if start <= s.t_ms <= end]
    if len(inside) < 2:
        return float("nan"), float("nan")
    load = statistics.median(s.load for s in inside)
    first, last = inside[0], inside[-1]
    span_ns = (last.t_ms - first.t_ms) * 1e6
    names = [n for n in last.cpu_ns if n in first.cpu_ns]
    cpus = [(last.cpu_ns[n] - first.cpu_ns[n]) / span_ns * 100 for n in names]
    return load, (statistics.mean(cpus) if cpus else float("nan"))


def run_once(spec: Path, variant: str, env: dict[str, str], out: Path) -> list[Run]:
    """One `harness run` of the spec: a Run per cell (named variant/cell with several)."""
    sampler = Sampler()
    sampler.start()
    t0 = time.time()
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "run", str(spec), "--out", str(out)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.time() - t0
    samples = sampler.stop()
    histories = sorted(out.glob("*/cells/*/history.jsonl"))
    if not histories:
        raise SystemExit(f"{variant}: no cell history under {out}\n{proc.stdout}\n{proc.stderr}")
    runs = []
    for history in histories:
        summary = json.loads((history.parent / "summary.json").read_text())
        timings = summary.get("timings") or {}
        steady = summary.get("ack_latency", {}).get("steady", {})
        load, cpu = during(samples, *workload_window(history))
        name = variant if len(histories) == 1 else f"{variant}/{history.parent.name}"
        runs.append(
            Run(
                variant=name,
                timings=timings,
                wall_s=wall / len(histories),
                load=load,
                broker_cpu=cpu,
                ack_p50=steady.get("p50_ms"),
                ack_p99=steady.get("p99_ms"),
                verdict=str(summary.get("verdict")),
            )
        )
    return runs


def parse_variant(text: str) -> tuple[str, dict[str, str]]:
    name, _, settings = text.partition(":")
    env: dict[str, str] = {}
    for item in filter(None, settings.split(",")):
        key, _, value = item.partition("=")
        env[key] = value
    return name, env


def fmt(values: list[float], digits: int = 1) -> str:
    clean = [v for v in values if v == v]
    if not clean:
        return "-"
    each = " / ".join(f"{v:.{digits}f}" for v in values)
    return f"**{statistics.median(clean):.{digits}f}** ({each})"


def table(runs: list[Run], variants: list[str]) -> list[str]:
    def t(key: str) -> Callable[[Run], float]:
        return lambda r: float(r.timings.get(key, float("nan")))

    rows: list[tuple[str, Callable[[Run], float]]] = [
        ("cluster s", t("cluster")),
        ("checks-wait s", t("checks_wait")),
        ("steady-state s", t("steady_state")),
        ("workload s (scheduled)", t("workload_scheduled")),
        ("workload s", t("workload")),
        ("heal+recovery+drain s", lambda r: sum(t(k)(r) for k in ("heal", "recovery", "drain"))),
        ("collect s", t("collect")),
        ("checks s", t("checks")),
        ("total s (timings)", t("total")),
        ("harness run process s", lambda r: r.wall_s),
        ("load (1-min, workload)", lambda r: r.load),
        ("CPU % per container (workload)", lambda r: r.broker_cpu),
        ("ack p50 ms (steady)", lambda r: float(r.ack_p50 or "nan")),
        ("ack p99 ms (steady)", lambda r: float(r.ack_p99 or "nan")),
    ]
    lines = ["| figure | " + " | ".join(variants) + " |", "|---|" + "---|" * len(variants)]
    for label, get in rows:
        cells = [fmt([get(r) for r in runs if r.variant == v]) for v in variants]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    verdicts = [", ".join(r.verdict for r in runs if r.variant == v) for v in variants]
    lines.append("| verdicts | " + " | ".join(verdicts) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--spec", type=Path, default=Path("benchmarks/specs/plain-cell.yaml"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--variant", action="append", default=[])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/cell_overhead.md"))
    args = parser.parse_args()
    variants = [parse_variant(v) for v in (args.variant or ["default:"])]
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="cell-overhead-") as tmp:
        for round_ in range(args.repeat):
            for name, env in variants:
                for run in run_once(args.spec, name, env, Path(tmp) / f"{name}-{round_}"):
                    runs.append(run)
                    print(
                        f"{run.variant} #{round_ + 1}: load {run.load:.1f}, "
                        f"CPU {run.broker_cpu:.0f} %, ack p50/p99 {run.ack_p50}/{run.ack_p99} ms, "
                        f"{run.verdict}; timings {run.timings}",
                        flush=True,
                    )
    names = list(dict.fromkeys(r.variant for r in runs))
    lines = [
        f"# Cell overhead: {args.spec} ({args.repeat} rounds, variants interleaved)",
        "",
        f"`python benchmarks/cell_overhead.py --spec {args.spec} --repeat {args.repeat} "
        + " ".join(f"--variant '{v}'" for v in args.variant)
        + "`",
        "",
        *table(runs, names),
        "",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
