"""What a cluster capability costs when no fault uses it: producer throughput and ack latency
of a 3-broker KRaft cluster built with it (link_proxies: every link through Toxiproxy;
power_loss_fs: every log directory on plfs) against the same cluster without it, alternated
(without, with, without, with...) so drift hits both alike.

Each round: an idempotent acks=all producer (linger 5 ms) writes RECORDS records of 200 bytes
to a 6-partition RF-3 topic as fast as it can (throughput: records / s from the first send
to the last ack), then PROBES single records one at a time (ack latency: each one's round
trip; p50 and p99).

`--capability flush` is what fsync costs where a power loss makes it matter: both clusters on
plfs, the topic with Kafka's default flush settings against `flush.messages: 1` (an fsync
per append: what keeps acknowledged records through a site's power cut).

Usage: python benchmarks/capability_overhead.py [--capability link_proxies|power_loss_fs|flush]
       [--rounds 3] [--out benchmarks/results/<capability>_overhead.md]
(`benchmarks/link_proxy_overhead.py` is the link proxies' run under its old name.)
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


TITLES = {
    "link_proxies": ("direct", "proxied, no toxic"),
    "power_loss_fs": ("plain", "on plfs"),
    "flush": ("on plfs, default flush", "on plfs, flush.messages 1"),
}
RESULTS = {
    "link_proxies": "link_proxy_overhead.md",
    "power_loss_fs": "plfs_overhead.md",
    "flush": "flush_messages_cost.md",
}


def measure(capability: str, on: bool) -> tuple[float, float, float]:
    """(records/s, ack p50 ms, ack p99 ms) on a fresh cluster."""
    flush = capability == "flush"
    built = {"power_loss_fs": True} if flush else {capability: on}
    with KafkaCluster(brokers=3, **built) as cluster:  # type: ignore[arg-type]
        config = {"flush.messages": "1"} if flush and on else None
        cluster.admin.create_topic(TOPIC, 6, 3, config)
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


def main(default: str = "power_loss_fs") -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--capability", choices=sorted(TITLES), default=default)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path("benchmarks/results") / RESULTS[args.capability]
    off, on = TITLES[args.capability]
    runs: dict[bool, list[tuple[float, float, float]]] = {False: [], True: []}
    for r in range(args.rounds):
        for with_it in (False, True):
            runs[with_it].append(measure(args.capability, with_it))
            rate, p50, p99 = runs[with_it][-1]
            print(
                f"round {r + 1} {on if with_it else off}: {rate:8.0f} rec/s  p50 {p50:5.2f} ms  p99 {p99:5.2f} ms"
            )
    med = {k: [statistics.median(x[i] for x in v) for i in range(3)] for k, v in runs.items()}
    d, p = med[False], med[True]
    lines = [
        f"# {args.capability} overhead ({time.strftime('%Y-%m-%d')}, {args.rounds} rounds, medians)",
        "",
        f"`python benchmarks/capability_overhead.py --capability {args.capability} --rounds {args.rounds}`",
        "",
        "| cluster | records/s | ack p50 ms | ack p99 ms |",
        "|---|---:|---:|---:|",
        f"| {off} | {d[0]:.0f} | {d[1]:.2f} | {d[2]:.2f} |",
        f"| {on} | {p[0]:.0f} | {p[1]:.2f} | {p[2]:.2f} |",
        f"| ratio / difference | {p[0] / d[0]:.2f}x | {p[1] - d[1]:+.2f} | {p[2] - d[2]:+.2f} |",
        "",
        "Every round: "
        + "; ".join(
            f"{on if k else off} {', '.join(f'{x[0]:.0f}/{x[2]:.2f}' for x in v)}"
            for k, v in runs.items()
        )
        + " (records/s / ack p99 ms)",
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
