"""Time to ready for 3-broker clusters (KRaft, ZooKeeper; each Kafka version) against the floor:
a bare single-broker container of the same image, timed until it logs start-up.

Usage: python benchmarks/cluster_start.py [--repeat 3] [--out benchmarks/results/cluster_start.md]
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from pathlib import Path

from testcontainers.core.network import Network

from harness import KafkaCluster
from harness.cluster.kafka_cluster import docker_client
from harness.nodes.images import built_versions, require_image
from harness.nodes.node import ClusterNode
from harness.nodes.ports import free_ports
from harness.nodes.reaper import RunGuard, run_labels
from harness.nodes.topology import kafka_properties, major_version, new_cluster_id, plan_nodes


def bare_single_broker(version: str) -> float:
    """One combined KRaft node, no readiness probe: just the JVM reaching 'started'."""
    client = docker_client()
    image = require_image(client, version)
    run_id = f"bench{uuid.uuid4().hex[:6]}"
    with RunGuard(client, run_id):
        network = Network(docker_network_kw={"labels": run_labels(run_id)})
        network.name = f"kc-{run_id}"
        network.create()
        specs = plan_nodes("kraft", 1, 0, free_ports(1))
        node = ClusterNode(
            specs[0],
            image,
            network,
            run_id,
            kafka_properties("kraft", specs[0], specs, {}),
            new_cluster_id(),
        )
        t0 = time.perf_counter()
        node.create()
        node.wait_started(120)
        return time.perf_counter() - t0


def cluster_ready(mode: str, version: str) -> float:
    t0 = time.perf_counter()
    with KafkaCluster(mode=mode, brokers=3, version=version):
        return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/cluster_start.md"))
    args = parser.parse_args()

    rows: list[tuple[str, str, str, list[float]]] = []
    floors: dict[str, float] = {}
    for version in built_versions():
        floor = [bare_single_broker(version) for _ in range(args.repeat)]
        floors[version] = statistics.median(floor)
        rows.append(("bare 1 broker (floor)", "kraft", version, floor))
        modes = ["kraft", "zookeeper"] if major_version(version) < 4 else ["kraft"]
        for mode in modes:
            rows.append(
                (
                    "3 brokers ready",
                    mode,
                    version,
                    [cluster_ready(mode, version) for _ in range(args.repeat)],
                )
            )
            print(rows[-1], flush=True)

    lines = [
        f"Cluster start, {args.repeat} runs each (`python benchmarks/cluster_start.py --repeat {args.repeat}`).",
        "Ready = every broker registered and an RF=N topic took an acks=all write.",
        "",
        "| what | mode | Kafka | median s | min s | max s | vs floor (x) |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for what, mode, version, times in rows:
        median = statistics.median(times)
        lines.append(
            f"| {what} | {mode} | {version} | {median:.1f} | {min(times):.1f} | {max(times):.1f} "
            f"| {median / floors[version]:.2f} |"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
