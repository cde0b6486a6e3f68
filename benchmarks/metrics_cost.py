"""What Kafka's own metrics cost: producer throughput of a 3-broker KRaft cluster whose JVMs
run the Prometheus JMX exporter agent and are scraped every second (metrics=True, as cells
run by default) against the same cluster without them, alternated (off, on, off, on...) so
drift hits both alike. Each round: an idempotent acks=all producer (linger 5 ms) writes
RECORDS records of 200 bytes to a 6-partition RF-3 topic as fast as it can (records / s
from the first send to the last ack). Issue 30 asks for on / off >= 0.95.

Usage: python benchmarks/metrics_cost.py [--rounds 3] [--out benchmarks/results/metrics_cost.md]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from confluent_kafka import Producer

from harness import KafkaCluster
from harness.cluster.metrics_scraper import MetricsScraper
from harness.results.history import History

RECORDS = 500_000  # several seconds of writes: many scrapes fall inside them
TOPIC = "bench"


def measure(metrics: bool) -> tuple[float, int]:
    """(records/s, scrapes made meanwhile) on a fresh cluster."""
    with KafkaCluster(brokers=3, metrics=metrics) as cluster:
        cluster.admin.create_topic(TOPIC, 6, 3)
        scraper = MetricsScraper(cluster.metrics_targets, History()).start() if metrics else None
        producer = Producer(
            {
                "bootstrap.servers": cluster.bootstrap_servers,
                "acks": "all",
                "enable.idempotence": True,
                "linger.ms": 5,
            }
        )
        value = b"v" * 200
        for _ in range(200):  # connections and metadata in place
            producer.produce(TOPIC, value)
        producer.flush(60)
        start = time.perf_counter()
        for _ in range(RECORDS):
            while True:
                try:
                    producer.produce(TOPIC, value)
                    break
                except BufferError:
                    producer.poll(0.01)
        assert producer.flush(120) == 0
        rate = RECORDS / (time.perf_counter() - start)
        scrapes = 0
        if scraper is not None:
            scraper.stop()
            scrapes = sum(scraper.scrapes.values())
        return rate, scrapes


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/metrics_cost.md"))
    args = parser.parse_args()
    runs: dict[bool, list[float]] = {False: [], True: []}
    for r in range(args.rounds):
        for metrics in (False, True):
            rate, scrapes = measure(metrics)
            runs[metrics].append(rate)
            label = f"on ({scrapes} scrapes)" if metrics else "off"
            print(f"round {r + 1} metrics {label}: {rate:8.0f} rec/s", flush=True)
    off, on = statistics.median(runs[False]), statistics.median(runs[True])
    lines = [
        f"# Broker metrics cost ({time.strftime('%Y-%m-%d')}, {args.rounds} rounds, medians)",
        "",
        "| metrics | records/s |",
        "|---|---:|",
        f"| off | {off:.0f} |",
        f"| on (agent + scrape every second) | {on:.0f} |",
        f"| on / off | {on / off:.2f}x |",
        "",
        "Every round (records/s): "
        + "; ".join(
            f"{'on' if k else 'off'} {', '.join(f'{x:.0f}' for x in v)}" for k, v in runs.items()
        ),
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
