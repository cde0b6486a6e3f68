"""What Kafka's own metrics cost the producer: throughput of a 3-broker KRaft cluster whose
JVMs run the Prometheus JMX exporter agent, with the harness's scraper asking every node each
second (as cells run by default) and without it.

The design, so that the difference is not drowned by the machine's drift:
- ONE cluster with the agent; rounds alternate scraping off / on in ABBA order (off on,
  on off, off on, ...) so a slow drift of the machine hits both settings alike. The scrape
  is the live cost: an agent nobody asks does nothing but hold its MBean registrations.
- then ONE cluster without the agent, the same rounds with nothing to scrape: the check that
  an idle agent costs ~nothing ("agent off" against "agent, no scrape").
- each round: a fresh producer PROCESS (the client is not slowed by the scraper's Python in
  this process, as a real application would not be) writes 200-byte records, idempotent
  acks=all, linger 5 ms, to a 6-partition RF-3 topic as fast as it can for SECONDS seconds;
  records / s = acked records / (last ack - first send). The scraper runs in this process,
  and its CPU per scrape round is measured (what it takes from a cell's runner, whose
  producer is a thread next to it).
- before the rounds, on the idle agent cluster: the Kafka containers' CPU per scrape round,
  asking for everything and asking only for the Kafka names (as the scraper does): a direct
  figure, far less at the mercy of the machine's load than throughput.
Issue 30 asks for scrape on / scrape off >= 0.95.

Usage: python benchmarks/metrics_cost.py [--rounds 3] [--seconds 12] [--out benchmarks/results/metrics_cost.md]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import docker

from harness import KafkaCluster
from harness.cluster.metrics_scraper import MetricsScraper, metrics_url
from harness.results.broker_metrics import exposition_rows
from harness.results.history import History

TOPIC = "bench"
# Bounded logs: a round writes ~1 GB over the replicas; keep the brokers' disks small.
TOPIC_CONFIG = {"retention.bytes": 64 * 1024 * 1024, "segment.bytes": 16 * 1024 * 1024}
BROKER_CONFIG = {"log.retention.check.interval.ms": 10_000}


def produce_for(bootstrap: str, seconds: float) -> tuple[int, float]:
    """In a child process: (records acked, seconds from the first timed send to the last ack)."""
    from confluent_kafka import Producer

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 5,
        }
    )
    value = b"v" * 200
    acked = [0]

    def report(err: object, _msg: object) -> None:
        if err is None:
            acked[0] += 1

    for _ in range(2000):  # connections, metadata and the producer id in place
        producer.produce(TOPIC, value)
    producer.flush(60)
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(1000):
            try:
                producer.produce(TOPIC, value, on_delivery=report)
            except BufferError:
                producer.poll(0.005)
        producer.poll(0)
    producer.flush(120)
    return acked[0], time.perf_counter() - start


@dataclass
class Round:
    setting: str
    rate: float
    load: float  # 1-minute load average at the round's end
    scrapes: int = 0
    rows_per_scrape: float = 0.0
    cpu_ms_per_round: float = 0.0  # the scraper's CPU in this process, per scrape round


@dataclass
class Results:
    rounds: list[Round] = field(default_factory=list)
    # The Kafka JVMs' CPU (ms, all nodes) per scrape round, on the idle cluster: direct and
    # far less noisy than throughput on a shared machine.
    jvm_cpu_ms_per_round: dict[str, float] = field(default_factory=dict)
    samples_per_node: int | None = None

    def rates(self, setting: str) -> list[float]:
        return [r.rate for r in self.rounds if r.setting == setting]


def one_round(cluster: KafkaCluster, setting: str, seconds: float) -> Round:
    ctx = mp.get_context("spawn")
    scraper = None
    if setting == "scrape":
        scraper = MetricsScraper(cluster.metrics_targets, History()).start()
    cpu0 = time.process_time()
    with ctx.Pool(1) as pool:
        records, elapsed = pool.apply(produce_for, (cluster.bootstrap_servers, seconds))
    cpu = time.process_time() - cpu0
    result = Round(setting, records / elapsed, os.getloadavg()[0])
    if scraper is not None:
        scraper.stop()
        rounds = max(1, max(scraper.scrapes.values(), default=0))
        result.scrapes = sum(scraper.scrapes.values())
        result.rows_per_scrape = scraper.rows / max(1, result.scrapes)
        result.cpu_ms_per_round = 1000 * cpu / rounds
    print(
        f"{setting:>9}: {result.rate:8.0f} rec/s ({records} in {elapsed:.1f} s), "
        f"load {result.load:.1f}"
        + (
            f", {result.scrapes} scrapes, {result.rows_per_scrape:.0f} rows each, "
            f"{result.cpu_ms_per_round:.0f} ms CPU per round"
            if scraper
            else ""
        ),
        flush=True,
    )
    return result


def cluster_cpu_ms(cluster: KafkaCluster) -> float:
    """CPU the cluster's containers used so far (ms, summed)."""
    client = docker.from_env()
    containers = client.containers.list(filters={"name": f"kc-{cluster.run_id}-"})
    total = 0.0
    for c in containers:
        stats = cast(dict[str, Any], c.stats(stream=False))  # one snapshot, not a stream
        total += stats["cpu_stats"]["cpu_usage"]["total_usage"]
    return total / 1e6


def jvm_cost(cluster: KafkaCluster, results: Results, seconds: float = 8.0) -> None:
    """With no producer: the containers' CPU while scraped about 8 rounds a second minus
    while not, per scrape round, for a full scrape and for the scraper's usual one (only its
    Kafka names: metrics_url), alternated idle, full, filtered, twice; medians."""
    targets = cluster.metrics_targets()
    port = next(iter(targets.values()))
    text = urllib.request.urlopen(metrics_url(port), timeout=5).read().decode()
    results.samples_per_node = sum(1 for ln in text.splitlines() if ln and ln[0] != "#")
    names = {metric for metric, _, _ in exposition_rows(text)}
    idle: list[float] = []
    per_round: dict[str, list[float]] = {"full": [], "filtered": []}
    for how in ("idle", "full", "filtered") * 2:
        before, start, rounds = cluster_cpu_ms(cluster), time.monotonic(), 0
        while time.monotonic() - start < seconds:
            if how != "idle":
                for p in targets.values():
                    url = metrics_url(p, names if how == "filtered" else ())
                    urllib.request.urlopen(url, timeout=5).read()
                rounds += 1
            time.sleep(0.1)
        elapsed = time.monotonic() - start
        rate = (cluster_cpu_ms(cluster) - before) / elapsed  # ms per s
        if how == "idle":
            idle.append(rate)
        else:
            per_round[how].append((rate - statistics.median(idle)) * elapsed / max(1, rounds))
    results.jvm_cpu_ms_per_round = {k: statistics.median(v) for k, v in per_round.items()}
    print(f"JVM CPU per scrape round: {per_round} ms (idle {idle} ms/s)", flush=True)


def run_cluster(metrics: bool, settings: list[str], seconds: float, results: Results) -> None:
    with KafkaCluster(brokers=3, broker_config=BROKER_CONFIG, metrics=metrics) as cluster:
        cluster.create_topic(TOPIC, 6, 3, TOPIC_CONFIG)
        if metrics:
            jvm_cost(cluster, results)
        one_round(cluster, settings[0], seconds / 2)  # warm-up (JIT, page cache), not counted
        for setting in settings:
            results.rounds.append(one_round(cluster, setting, seconds))


def spread(values: list[float]) -> str:
    return f"{min(values):,.0f}-{max(values):,.0f}"


def report(results: Results, args: argparse.Namespace, load_before: float) -> list[str]:
    rows = [("no agent", "agent-less cluster")]
    rows += [("idle", "agent, not scraped"), ("scrape", "agent, scraped every second")]
    med = {s: statistics.median(results.rates(s)) for s, _ in rows if results.rates(s)}
    scraped = [r for r in results.rounds if r.setting == "scrape"]
    loads = [r.load for r in results.rounds]
    lines = [
        f"# Broker metrics cost ({time.strftime('%Y-%m-%d %H:%M')}, {args.rounds} rounds per "
        f"setting of {args.seconds:g} s, medians)",
        "",
        "| setting | records/s, median | min-max | rounds |",
        "|---|---:|---|---|",
    ]
    for setting, words in rows:
        if setting in med:
            values = results.rates(setting)
            lines.append(
                f"| {words} | {med[setting]:,.0f} | {spread(values)} | "
                + ", ".join(f"{v:,.0f}" for v in values)
                + " |"
            )
    agent = [r for r in results.rounds if r.setting in ("idle", "scrape")]
    pairs = [
        (b.rate / a.rate if a.setting == "idle" else a.rate / b.rate)
        for a, b in zip(agent[0::2], agent[1::2], strict=True)
    ]
    lines += [
        "",
        f"- scrape / idle: **{med['scrape'] / med['idle']:.3f}x** (issue 30: >= 0.95); "
        f"per adjacent pair (drift cancelled): median {statistics.median(pairs):.3f}x, "
        + ", ".join(f"{p:.2f}" for p in pairs),
    ]
    if results.jvm_cpu_ms_per_round:
        cost = results.jvm_cpu_ms_per_round
        lines.append(
            f"- the Kafka JVMs' CPU per scrape round (3 nodes, idle cluster): "
            f"{cost['full']:.1f} ms asking for everything ({results.samples_per_node} samples a "
            f"node), {cost['filtered']:.1f} ms asking only for the Kafka names (the scraper's "
            f"usual scrape), i.e. {cost['filtered'] / 20:.2f} % of two cores at a round a second"
        )
    if "no agent" in med:
        lines.append(f"- idle agent / no agent: {med['idle'] / med['no agent']:.3f}x")
    lines += [
        f"- a scrape round: {statistics.median(r.rows_per_scrape for r in scraped) * 3:.0f} rows "
        f"over 3 nodes, {statistics.median(r.cpu_ms_per_round for r in scraped):.0f} ms of "
        "CPU in the scraping process",
        f"- load average (1 min): {load_before:.1f} before, {min(loads):.1f}-{max(loads):.1f} "
        "during the rounds (2 cores)",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds per setting")
    parser.add_argument("--seconds", type=float, default=12.0, help="seconds of writes a round")
    parser.add_argument("--no-agentless", action="store_true", help="skip the agent-less cluster")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/metrics_cost.md"))
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    results = Results()
    abba: list[str] = []
    for r in range(args.rounds):
        abba += ["idle", "scrape"] if r % 2 == 0 else ["scrape", "idle"]
    run_cluster(True, abba, args.seconds, results)
    if not args.no_agentless:
        run_cluster(False, ["no agent"] * args.rounds, args.seconds, results)
    lines = report(results, args, load_before)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
