"""The scraper against a local HTTP server standing in for a JMX exporter, and a closed port."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlencode

import pyarrow.parquet as pq
import pytest

from harness.cluster.metrics_scraper import FULL_SCRAPE_EVERY, FULL_SCRAPES_FIRST, MetricsScraper
from harness.nodes.ports import free_ports
from harness.results import broker_metrics as bm
from harness.results.history import History

ANSWER = b"""# TYPE kafka_server_replicamanager_underreplicatedpartitions gauge
kafka_server_replicamanager_underreplicatedpartitions 2.0
# TYPE jvm_threads_current gauge
jvm_threads_current 80.0
"""


class _Exporter(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.end_headers()
        self.wfile.write(ANSWER)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def exporter() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Exporter)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


def test_rows_of_answers_and_an_up_0_row_per_failed_scrape(exporter: int, tmp_path: Path) -> None:
    history = History()
    closed = free_ports(1)[0]
    scraper = MetricsScraper(lambda: {"broker-1": exporter, "broker-2": closed}, history)
    scraper._pool = ThreadPoolExecutor(2)  # the rounds by hand, no thread
    scraper.scrape_once()
    scraper.scrape_once()
    rows = scraper.write(tmp_path / "metrics.parquet")
    table = pq.read_table(tmp_path / "metrics.parquet").to_pylist()
    assert rows == len(table) == 2 * (2 + 1)  # broker-1: up + one kafka sample; broker-2: up 0
    by_node = {(r["node"], r["metric"]) for r in table}
    assert by_node == {
        ("broker-1", bm.UP),
        ("broker-1", bm.UNDER_REPLICATED),
        ("broker-2", bm.UP),
    }
    assert [r["value"] for r in table if r["node"] == "broker-2"] == [0.0, 0.0]
    assert all(r["labels"].startswith("error=") for r in table if r["node"] == "broker-2")
    (event,) = [e.as_dict() for e in history.events if e.kind == "metrics.scrape"]
    assert json.loads(json.dumps(event))["failed"] == {"broker-2": 2}
    assert scraper.write(tmp_path / "again.parquet") == rows  # once
    assert not (tmp_path / "again.parquet").exists()


def test_after_the_first_full_scrapes_it_asks_only_for_the_kafka_names(tmp_path: Path) -> None:
    paths: list[str] = []

    class Recording(_Exporter):
        def do_GET(self) -> None:
            paths.append(self.path)
            super().do_GET()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recording)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = int(server.server_address[1])
        scraper = MetricsScraper(lambda: {"broker-1": port}, History())
        scraper._pool = ThreadPoolExecutor(1)
        for _ in range(FULL_SCRAPE_EVERY + 2):
            scraper.scrape_once()
        rows = scraper.write(tmp_path / "metrics.parquet")
    finally:
        server.shutdown()
        server.server_close()
    filtered = "/metrics?" + urlencode({"name[]": bm.UNDER_REPLICATED})
    expected = ["/metrics"] * FULL_SCRAPES_FIRST
    expected += [filtered] * (FULL_SCRAPE_EVERY - FULL_SCRAPES_FIRST) + ["/metrics", filtered]
    assert paths == expected
    assert rows == 2 * (FULL_SCRAPE_EVERY + 2)  # up + the one Kafka sample, every round
