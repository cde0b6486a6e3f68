"""What the link proxies cost when no toxic is on: producer throughput and ack latency of a
3-broker KRaft cluster wired through Toxiproxy (link_proxies=True) against the same cluster
wired directly, alternated (direct, proxied, direct, proxied...) so drift hits both alike.

Each round: an idempotent acks=all producer (linger 5 ms) writes RECORDS records of 200 bytes
to a 6-partition RF-3 topic as fast as it can (throughput: records / s from the first send
to the last ack), then PROBES single records one at a time (ack latency: each one's round
trip; p50 and p99). Replication crosses the proxies too.

Usage: python benchmarks/link_proxy_overhead.py [--rounds 3] [--out benchmarks/results/link_proxy_overhead.md]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from confluent_kafka import Producer

from harness import KafkaCluster

RECORDS = 30_000
PROBES = 300
TOPIC = "bench"


def measure(link_proxies: bool) -> tuple[float, float, float]:
    """(records/s, ack p50 ms, ack p99 ms) on a fresh cluster."""
    with KafkaCluster(brokers=3, link_proxies=link_proxies) as cluster:
        cluster.admin.create_topic(TOPIC, 6, 3)
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
        trips = []
        for i in range(PROBES):
            t0 = time.perf_counter()
            producer.produce(TOPIC, value, partition=i % 6)
            producer.flush(30)
            trips.append((time.perf_counter() - t0) * 1000)
        trips.sort()
        return rate, trips[len(trips) // 2], trips[int(len(trips) * 0.99) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--out", type=Path, default=Path("benchmarks/results/link_proxy_overhead.md")
    )
    args = parser.parse_args()
    runs: dict[bool, list[tuple[float, float, float]]] = {False: [], True: []}
    for r in range(args.rounds):
        for proxied in (False, True):
            runs[proxied].append(measure(proxied))
            rate, p50, p99 = runs[proxied][-1]
            print(
                f"round {r + 1} {'proxied' if proxied else 'direct '}: {rate:8.0f} rec/s  p50 {p50:5.2f} ms  p99 {p99:5.2f} ms"
            )
    med = {k: [statistics.median(x[i] for x in v) for i in range(3)] for k, v in runs.items()}
    d, p = med[False], med[True]
    lines = [
        f"# Link proxy overhead ({time.strftime('%Y-%m-%d')}, {args.rounds} rounds, medians)",
        "",
        "| path | records/s | ack p50 ms | ack p99 ms |",
        "|---|---:|---:|---:|",
        f"| direct | {d[0]:.0f} | {d[1]:.2f} | {d[2]:.2f} |",
        f"| proxied, no toxic | {p[0]:.0f} | {p[1]:.2f} | {p[2]:.2f} |",
        f"| ratio / difference | {p[0] / d[0]:.2f}x | {p[1] - d[1]:+.2f} | {p[2] - d[2]:+.2f} |",
        "",
        "Every round: "
        + "; ".join(
            f"{'proxied' if k else 'direct'} {', '.join(f'{x[0]:.0f}/{x[2]:.2f}' for x in v)}"
            for k, v in runs.items()
        )
        + " (records/s / ack p99 ms)",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
