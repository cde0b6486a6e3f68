"""Kafka's own metrics over a cell: every Kafka node's JMX exporter, scraped about once a second.

A daemon thread asks each node's /metrics on 127.0.0.1 (all nodes at once, short timeouts)
from the cluster's start to the collect phase, and keeps the rows (tables.METRICS): Kafka's
metrics with `up` 1 for an answer, one `up` 0 row naming the error for a node that did not
answer (killed, stopped, paused, or just slow), so the file shows its gaps. Like the
partition watch it only looks: a scrape that fails is recorded, never raised.
"""

from __future__ import annotations

import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlencode

from harness.results import events as ev
from harness.results.broker_metrics import (
    SCRAPE_TIMEOUT_S,
    UP,
    Row,
    exposition_rows,
    labels_text,
)
from harness.results.history import History, now_ms
from harness.results.tables import METRICS, write_table

SCRAPE_INTERVAL_S = 1.0
# A node is asked for every metric (no filter) at its first FULL_SCRAPES_FIRST scrapes (its
# Kafka registers MBeans while it starts) and then every FULL_SCRAPE_EVERY-th: the others ask
# only for the Kafka metric names its last full answer had.
FULL_SCRAPES_FIRST = 10
FULL_SCRAPE_EVERY = 30

# Node name -> host port of its /metrics now (KafkaCluster.metrics_targets).
Targets = Callable[[], Mapping[str, int]]


def metrics_url(port: int, names: Collection[str] = ()) -> str:
    """The node's /metrics, asking only for `names` when given (the agent's `name[]` filter:
    it then skips its JVM collectors, about two thirds of an answer and of its cost, which
    the scraper would drop anyway; benchmarks/metrics_cost.py)."""
    query = urlencode([("name[]", n) for n in sorted(names)])
    return f"http://127.0.0.1:{port}/metrics" + (f"?{query}" if query else "")


def scrape(
    port: int, timeout_s: float = SCRAPE_TIMEOUT_S, names: Collection[str] = ()
) -> list[Row]:
    """One node's answer as rows, `up` 1 first; `up` 0 with the error when it fails."""
    try:
        with urllib.request.urlopen(metrics_url(port, names), timeout=timeout_s) as r:
            text = r.read().decode("utf-8", errors="replace")
        return [(UP, "", 1.0), *exposition_rows(text)]
    except Exception as exc:  # refused, reset, timed out, not the format: a gap
        return [(UP, labels_text({"error": f"{type(exc).__name__}: {exc}"[:200]}), 0.0)]


class MetricsScraper:
    """Scrapes `targets()` every `interval_s` in a daemon thread from `start` until `stop`."""

    def __init__(
        self, targets: Targets, history: History, interval_s: float = SCRAPE_INTERVAL_S
    ) -> None:
        self.history = history
        self.interval_s = interval_s
        self.scrapes: Counter[str] = Counter()  # node -> scrapes
        self.failed: Counter[str] = Counter()  # node -> scrapes that failed
        self._targets = targets
        self._columns: dict[str, list[object]] = {n: [] for n in METRICS.names}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._written = False
        self._names: dict[str, frozenset[str]] = {}  # node -> its Kafka metric names

    def start(self) -> MetricsScraper:
        if self._thread is None and not self._stop.is_set():
            self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="metrics-scrape")
            self._thread = threading.Thread(target=self._run, name="metrics-scraper", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """No row after this returns (a scrape under way is thrown away)."""
        with self._lock:
            self._stop.set()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    @property
    def rows(self) -> int:
        with self._lock:
            return len(self._columns["ts"])

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            self.scrape_once()
            self._stop.wait(max(0.0, self.interval_s - (time.monotonic() - started)))

    def scrape_once(self) -> None:
        """One round: every node at once; their rows stamped with the round's start."""
        try:
            targets = dict(self._targets())
        except Exception:  # the cluster is changing (a broker added): the next round will see
            return
        pool = self._pool
        if not targets or pool is None:
            return
        ts = now_ms()
        try:
            futures = {
                name: pool.submit(scrape, port, SCRAPE_TIMEOUT_S, self._asked(name))
                for name, port in sorted(targets.items())
            }
        except RuntimeError:  # the pool was shut down: stopped
            return
        answers = {name: f.result() for name, f in futures.items()}
        with self._lock:
            if self._stop.is_set():
                return
            for name, rows in answers.items():
                full = not self._asked(name)
                self.scrapes[name] += 1
                if rows[0][0] == UP and rows[0][2] == 0.0:
                    self.failed[name] += 1
                elif full:
                    self._names[name] = frozenset(metric for metric, _, _ in rows[1:])
                for metric, labels, value in rows:
                    self._columns["ts"].append(ts)
                    self._columns["node"].append(name)
                    self._columns["metric"].append(metric)
                    self._columns["labels"].append(labels)
                    self._columns["value"].append(value)

    def _asked(self, node: str) -> frozenset[str]:
        """The names to ask `node` for this round; empty: everything (a full scrape)."""
        done = self.scrapes[node]
        if done < FULL_SCRAPES_FIRST or done % FULL_SCRAPE_EVERY == 0:
            return frozenset()
        return self._names.get(node, frozenset())

    def write(self, path: Path) -> int:
        """Stop, write metrics.parquet and record a `metrics.scrape` event; the rows written.
        Once: a second call writes nothing and returns the same count."""
        self.stop()
        with self._lock:
            columns = {k: list(v) for k, v in self._columns.items()}
            first = not self._written
            self._written = True
        rows = len(columns["ts"])
        if first:
            write_table(path, METRICS, columns)
            self.history.append(
                ev.METRICS_SCRAPE,
                interval_s=self.interval_s,
                scrapes=dict(sorted(self.scrapes.items())),
                failed=dict(sorted(self.failed.items())),
                rows=rows,
            )
        return rows
