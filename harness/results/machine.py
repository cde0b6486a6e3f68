"""The machine a cell ran on, from its `machine.parquet`: when it was overloaded, how busy, and
whose load it was.

The sampler (harness.common.machine_sampler) writes a `host` row every ~100 ms: how late a
100 ms sleep woke, CPU busy, CPU pressure (PSI), load. A row is overloaded when its last
second kept the CPU saturated (BUSY_OVERLOADED_PCT), or some runnable task waited for a core
most of the time (PRESSURE_OVERLOADED_PCT), or its sleep woke LAG_OVERLOADED_MS late. Any of
these says a thread of ours may have waited for a core, whatever the cause (another
experiment, a CI neighbour, a stolen vCPU, or the cell's own weight); the `harness`,
`clients` and container rows say whose load it was. Which timing figures an overload leaves
undecided: harness.results.overload_rules. Thresholds and the measurements behind them:
docs/results.md.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

HOST = "host"  # the sampler's machine-wide rows; the others are one container each, or
HARNESS = "harness"  # ... the runner's own process tree (Spark's checks, the sampler; and,
# in folders sampled before 2026-12-07, its clients too)
CLIENTS = "clients"  # ... the Kafka clients in that tree (members, producers, rdk: threads)
OTHER = "other:"  # prefix of a container that was not one of the cell's nodes
# A row this late is overloaded. All thresholds chosen from measurements: docs/results.md
# ("The machine").
LAG_OVERLOADED_MS = 100.0
# ... and so is one whose last second kept every core this busy (the CPU saturated: a thread
# that wakes waits for a core; a light cell beside CPU burners shows only this), ...
BUSY_OVERLOADED_PCT = 95.0
# ... or had some runnable task waiting for a core this share of the time (PSI's cpu `some`:
# the kernel's own measure of CPU contention).
PRESSURE_OVERLOADED_PCT = 80.0
MACHINE_SCHEMA = pa.schema(
    [
        ("ts_ms", pa.int64()),
        # host, harness, clients, a node's name, or other:<container id>
        ("source", pa.string()),
        ("lag_ms", pa.float64()),  # host rows: how late a ~100 ms sleep woke
        ("load1", pa.float64()),  # host rows: /proc/loadavg's 1-minute load
        ("busy_pct", pa.float64()),  # host rows: CPU busy since the last row (all cores)
        ("steal_pct", pa.float64()),  # host rows: CPU stolen by the hypervisor since then
        ("pressure_pct", pa.float64()),  # host rows: PSI cpu `some` since then (null: no PSI)
        ("running", pa.int64()),  # host rows: procs_running at that moment
        # container, harness and clients rows: CPU time used since its last row; host rows:
        # all the machine's CPU time used (every core, steal left out) since the last row
        ("cpu_ms", pa.float64()),
        ("throttled_ms", pa.float64()),  # container rows: time its CFS quota throttled it
    ]
)

Span = tuple[int, int]  # [start_ms, end_ms)


def write_machine(csv_path: Path, out: Path, names: dict[str, str]) -> int:
    """The sampler's CSV as `machine.parquet`, containers named by `names` (id -> node);
    the rows written (0 and no file when the sampler wrote nothing)."""
    if not csv_path.exists() or csv_path.stat().st_size == 0:
        return 0
    types = {f.name: f.type for f in MACHINE_SCHEMA}
    lines = csv_path.read_bytes().split(b"\n")[:-1]  # the last one, torn or empty, left out
    whole = b"\n".join(x for x in lines if x.count(b",") == len(MACHINE_SCHEMA) - 1)
    table = pacsv.read_csv(
        io.BytesIO(whole + b"\n"),
        convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=False),
    )
    sources = [
        s if s in (HOST, HARNESS, CLIENTS) else names.get(s, OTHER + s)
        for s in table.column("source").to_pylist()
    ]
    table = table.set_column(table.schema.get_field_index("source"), "source", pa.array(sources))
    pq.write_table(table.select(MACHINE_SCHEMA.names).cast(MACHINE_SCHEMA), out)
    return int(table.num_rows)


@dataclass(frozen=True)
class Machine:
    """The host rows, in time order; what is derived from them is computed once (each
    figure's reason reads the spans again)."""

    ts_ms: np.ndarray
    lag_ms: np.ndarray
    load1: np.ndarray
    steal_pct: np.ndarray
    throttled_ms: float  # summed over the containers and the cell
    pressure_pct: np.ndarray | None = None  # PSI cpu `some` per row (NaN: none measured)
    busy_pct: np.ndarray | None = None  # CPU busy per row, all cores
    # CPU ms used since their previous row, at their ts_ms: the cell's own nodes' containers,
    # and any other container's (whose load is not the cell's)
    node_cpu: tuple[np.ndarray, np.ndarray] | None = None
    other_cpu: tuple[np.ndarray, np.ndarray] | None = None
    # ... the harness's own processes', and the whole machine's (None: a folder sampled
    # before either was: then whose the rest of the load was is not said)
    harness_cpu: tuple[np.ndarray, np.ndarray] | None = None
    host_cpu: tuple[np.ndarray, np.ndarray] | None = None
    # ... the Kafka clients' the workload ran, apart from the harness's (None: a folder
    # sampled before they were, whose harness_cpu holds them)
    clients_cpu: tuple[np.ndarray, np.ndarray] | None = None

    @cached_property
    def pressure_1s(self) -> np.ndarray:
        """PSI averaged over each row's last second (NaN without PSI)."""
        return self._last_second(self.pressure_pct)

    @cached_property
    def busy_1s(self) -> np.ndarray:
        """CPU busy averaged over each row's last second (NaN: not measured)."""
        return self._last_second(self.busy_pct)

    def _last_second(self, values: np.ndarray | None) -> np.ndarray:
        if values is None or self.ts_ms.size == 0:
            return np.full(self.ts_ms.shape, np.nan)
        series = pd.Series(values, index=pd.to_datetime(self.ts_ms, unit="ms"))
        means: np.ndarray = series.rolling("1s").mean().to_numpy(dtype=float)
        return means

    @cached_property
    def overloaded(self) -> np.ndarray:
        """Per row: the machine was overloaded over the interval it closes."""
        pressed = np.nan_to_num(self.pressure_1s, nan=0.0) >= PRESSURE_OVERLOADED_PCT
        saturated = np.nan_to_num(self.busy_1s, nan=0.0) >= BUSY_OVERLOADED_PCT
        late = self.lag_ms >= LAG_OVERLOADED_MS
        rows: np.ndarray = late | pressed | saturated
        return rows

    @cached_property
    def spans(self) -> list[Span]:
        return overloaded_spans(self.ts_ms, self.overloaded, self.lag_ms)


def read_machine(path: Path) -> Machine | None:
    """The cell's machine table; None when there is none (a cell from before the sampler)."""
    if not path.exists():
        return None
    table = pq.read_table(path).to_pandas()
    host = table[table["source"] == HOST].sort_values("ts_ms")
    harness = table[table["source"] == HARNESS]
    clients = table[table["source"] == CLIENTS]
    containers = table[~table["source"].isin([HOST, HARNESS, CLIENTS])]
    other = containers["source"].str.startswith(OTHER)
    host_used = host["cpu_ms"].notna().any()
    return Machine(
        ts_ms=host["ts_ms"].to_numpy(dtype=np.int64),
        lag_ms=host["lag_ms"].fillna(0.0).to_numpy(dtype=float),
        load1=host["load1"].fillna(0.0).to_numpy(dtype=float),
        steal_pct=host["steal_pct"].fillna(0.0).to_numpy(dtype=float),
        throttled_ms=float(containers["throttled_ms"].fillna(0.0).sum()),
        pressure_pct=host["pressure_pct"].to_numpy(dtype=float) if "pressure_pct" in host else None,
        busy_pct=host["busy_pct"].to_numpy(dtype=float),
        node_cpu=_cpu(containers[~other]),
        other_cpu=_cpu(containers[other]),
        harness_cpu=_cpu(harness) if host_used else None,
        host_cpu=_cpu(host) if host_used else None,
        clients_cpu=_cpu(clients) if host_used and not clients.empty else None,
    )


def _cpu(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    return (
        rows["ts_ms"].to_numpy(dtype=np.int64),
        # Folders sampled before the sampler knew of restarted cgroups hold negative deltas.
        rows["cpu_ms"].fillna(0.0).clip(lower=0.0).to_numpy(dtype=float),
    )


def _cores(cpu: tuple[np.ndarray, np.ndarray] | None, windows: Sequence[Span]) -> float:
    """Cores used on average over the windows by the rows of `cpu` (0 without rows)."""
    total = sum(max(0, b - a) for a, b in windows)
    if cpu is None or total <= 0:
        return 0.0
    ts, ms = cpu
    used = sum(float(ms[(ts > a) & (ts <= b)].sum()) for a, b in windows)
    return used / total


def overloaded_spans(
    ts_ms: Sequence[int] | np.ndarray,
    overloaded: Sequence[bool] | np.ndarray,
    lag_ms: Sequence[float] | np.ndarray | None = None,
) -> list[Span]:
    """The intervals closed by overloaded rows (each from the row before it), merged; an
    overloaded first row covers only its own lag."""
    spans: list[Span] = []
    for i, (ts, over) in enumerate(zip(ts_ms, overloaded, strict=True)):
        if not over:
            continue
        lag = 0 if lag_ms is None else int(lag_ms[i])
        start = int(ts_ms[i - 1]) if i > 0 else int(ts) - lag
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], int(ts))
        elif start < int(ts):
            spans.append((start, int(ts)))
    return spans


def overlap_ms(spans: Iterable[Span], windows: Iterable[Span]) -> int:
    """How much of the windows the spans cover (neither list overlaps itself)."""
    windows = list(windows)
    return sum(max(0, min(b, we) - max(a, ws)) for a, b in spans for ws, we in windows if we > ws)


def machine_summary(machine: Machine) -> dict[str, float | int]:
    """The summary's `machine`: the lag's p50 / p99 / max, seconds overloaded, the load's and
    steal's highs, the containers' throttled seconds, the cores used on average by whom (where
    measured), and the rule's thresholds."""
    lag = machine.lag_ms
    spans = machine.spans
    return {
        **cores_by_whom(machine),
        "samples": int(lag.size),
        "lag_p50_ms": _pct(lag, 50),
        "lag_p99_ms": _pct(lag, 99),
        "lag_max_ms": round(float(lag.max()), 1) if lag.size else 0.0,
        "overloaded_s": round(sum(b - a for a, b in spans) / 1000.0, 1),
        "load1_max": round(float(machine.load1.max()), 2) if lag.size else 0.0,
        "steal_max_pct": round(float(machine.steal_pct.max()), 1) if lag.size else 0.0,
        "throttled_s": round(machine.throttled_ms / 1000.0, 1),
        "busy_p50_pct": _pct(_measured(machine.busy_1s), 50),
        "pressure_p50_pct": _pct(_measured(machine.pressure_1s), 50),
        "pressure_p90_pct": _pct(_measured(machine.pressure_1s), 90),
        "lag_overloaded_ms": LAG_OVERLOADED_MS,
        "busy_overloaded_pct": BUSY_OVERLOADED_PCT,
        "pressure_overloaded_pct": PRESSURE_OVERLOADED_PCT,
    }


def cores_by_whom(machine: Machine) -> dict[str, float]:
    """Over the whole sampled time: kafka_cores, and where the sampler measured them,
    harness_cores, clients_cores and rest_cores (whose load was it: the cell's, or a
    neighbour's)."""
    if machine.ts_ms.size < 2:
        return {}
    split = _split(machine, [(int(machine.ts_ms[0]), int(machine.ts_ms[-1]))])
    return {f"{who}_cores": round(cores, 2) for who, cores in split.items() if who != "other"}


def _split(machine: Machine, windows: Sequence[Span]) -> dict[str, float]:
    """Cores used on average over the windows: kafka, other (containers), and where the
    sampler measured them harness, clients (the Kafka clients the workload ran; in a folder
    sampled before 2026-12-07 they are the harness's) and rest (the machine less all of
    those); {} without container rows."""
    if machine.node_cpu is None:
        return {}
    out = {"kafka": _cores(machine.node_cpu, windows), "other": _cores(machine.other_cpu, windows)}
    if machine.host_cpu is not None:
        out["harness"] = _cores(machine.harness_cpu, windows)
        if machine.clients_cpu is not None:
            out["clients"] = _cores(machine.clients_cpu, windows)
        out["rest"] = max(0.0, _cores(machine.host_cpu, windows) - sum(out.values()))
    return out


def _measured(values: np.ndarray) -> np.ndarray:
    kept: np.ndarray = values[~np.isnan(values)]
    return kept


def _pct(values: np.ndarray, p: int) -> float:
    return round(float(np.percentile(values, p)), 1) if values.size else 0.0


def describe_overload(machine: Machine, windows: Sequence[Span]) -> str:
    """The machine over the windows: how long it was overloaded, its load, whose load."""
    total = sum(max(0, b - a) for a, b in windows)
    if total <= 0:
        return "machine overloaded"
    over = overlap_ms(machine.spans, windows)
    inside = np.zeros(machine.ts_ms.shape, dtype=bool)
    for a, b in windows:
        inside |= (machine.ts_ms >= a) & (machine.ts_ms < b)
    said = f"machine overloaded for {over / 1000:.1f} s of this {total / 1000:.1f} s window"
    if not inside.any():
        return said
    busy = _measured(machine.busy_1s[inside])
    pressure = _measured(machine.pressure_1s[inside])
    lag = machine.lag_ms[inside]
    parts = [f"CPU busy p50 {_pct(busy, 50):.0f} %"] if busy.size else []
    parts += [f"CPU pressure p50 {_pct(pressure, 50):.0f} %"] if pressure.size else []
    parts.append(f"wake-up lag p99 {_pct(lag, 99) / 1000:.2f} s")
    parts.append(f"load up to {float(machine.load1[inside].max()):.1f}")
    parts += whose_load(machine, windows)
    return f"{said} ({', '.join(parts)})"


def whose_load(machine: Machine, windows: Sequence[Span]) -> list[str]:
    """The cores used on average over the windows, by whom: the cell's Kafka containers, other
    containers, the harness's own processes, the Kafka clients' it ran (their processes and
    the librdkafka threads in the runner: the client under test, not the harness), and the
    rest of the machine (a neighbour, CPU burners: load that is not the cell's). The last
    three only where the sampler measured them."""
    split = _split(machine, windows)
    if not split:
        return []
    parts = [f"Kafka's containers {split['kafka']:.2f} cores"]
    if split["other"] >= 0.01:
        parts.append(f"other containers {split['other']:.2f} cores")
    if "harness" in split:
        parts.append(f"the harness's processes {split['harness']:.2f} cores")
        if "clients" in split:
            parts.append(f"the clients' processes {split['clients']:.2f} cores")
        parts.append(f"the rest of the machine {split['rest']:.2f} cores")
    return parts
