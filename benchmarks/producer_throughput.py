"""The workload's ledger producer against Kafka's own ProducerPerformance tool.

Both run on the host against the same 3-broker KRaft cluster (client listener
127.0.0.1), same acks (1 and all; idempotence on exactly for acks=all, as the
ledger producer does), same record size and count, alternating, `--repeat` times.
ProducerPerformance runs from the very jars the broker image was built from
(classpath resolved by Maven from docker/pom.xml).

Usage: python benchmarks/producer_throughput.py [--records 200000] [--repeat 3]
       [--out benchmarks/results/producer_throughput.md]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from harness import DEFAULT_VERSION, KafkaCluster
from harness.common.spec_base import MAX_RATE
from harness.results.history import History
from harness.spec.producer import ProducerSpec
from harness.workload.producer.thread import ProducerThread
from harness.workload.runtime import Runtime

ROOT = Path(__file__).resolve().parent.parent
RECORD_SIZE = 100


def kafka_classpath(version: str) -> str:
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as out:
        subprocess.run(
            [
                "mvn", "-q", "-B", "-f", str(ROOT / "docker" / "pom.xml"),
                f"-Dkafka.version={version}", "-DincludeScope=runtime",
                f"-Dmdep.outputFile={out.name}", "dependency:build-classpath",
            ],
            check=True,
        )  # fmt: skip
        return Path(out.name).read_text().strip()


def producer_performance(
    classpath: str, bootstrap: str, topic: str, acks: str, records: int
) -> float:
    idempotence = "true" if acks == "all" else "false"
    done = subprocess.run(
        [
            "java", "-Xmx512m", "-cp", classpath, "org.apache.kafka.tools.ProducerPerformance",
            "--topic", topic, "--num-records", str(records), "--record-size", str(RECORD_SIZE),
            "--throughput", "-1", "--producer-props", f"bootstrap.servers={bootstrap}",
            f"acks={acks}", f"enable.idempotence={idempotence}", "linger.ms=5",
        ],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    summary = [line for line in done.stdout.splitlines() if "records sent" in line][-1]
    match = re.search(r"records sent, ([\d.]+) records/sec", summary)
    assert match, summary
    return float(match.group(1))


def ledger_producer(bootstrap: str, topic: str, acks: str, records: int) -> float:
    spec = ProducerSpec.model_validate(
        {
            "acks": acks,
            "enable_idempotence": acks == "all",
            "rate": MAX_RATE,  # unpaced: far above what one producer reaches
            "records": records,
            "record_size": RECORD_SIZE,
        }
    )
    with tempfile.TemporaryDirectory(prefix="ledger-producer-") as folder:
        runtime = Runtime(bootstrap, topic, Path(folder), max_s=3600.0, seed=0)
        producer = ProducerThread(spec, runtime, History())
        t0 = time.perf_counter()
        producer.start()
        producer.join()
        elapsed = time.perf_counter() - t0
    if producer.acked != records:
        raise RuntimeError(f"ledger producer: {producer.acked}/{records} acked")
    return records / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks/results/producer_throughput.md"
    )
    args = parser.parse_args()
    classpath = kafka_classpath(DEFAULT_VERSION)
    rows = []
    with KafkaCluster("kraft", 3, DEFAULT_VERSION) as cluster:
        for acks in ("1", "all"):
            java: list[float] = []
            ours: list[float] = []
            for i in range(args.repeat):
                topic = f"bench-{acks}-{i}"
                cluster.create_topic(topic, partitions=6, replication_factor=3)
                java.append(
                    producer_performance(
                        classpath, cluster.bootstrap_servers, topic, acks, args.records
                    )
                )
                topic = f"bench-{acks}-{i}-ledger"
                cluster.create_topic(topic, partitions=6, replication_factor=3)
                ours.append(ledger_producer(cluster.bootstrap_servers, topic, acks, args.records))
                print(
                    f"acks={acks} run {i + 1}: ProducerPerformance {java[-1]:,.0f}/s, ledger {ours[-1]:,.0f}/s"
                )
            rows.append((acks, statistics.median(java), statistics.median(ours)))
    lines = [
        f"Producer throughput, {args.records:,} records of {RECORD_SIZE} B, 3 brokers KRaft "
        f"{DEFAULT_VERSION}, topic 6 partitions RF 3, median of {args.repeat} "
        f"(`python benchmarks/producer_throughput.py --records {args.records} --repeat {args.repeat}`).",
        "",
        "| acks | ProducerPerformance rec/s | ledger producer rec/s | ledger / Java |",
        "|---|---:|---:|---:|",
    ]
    for acks, java_rate, our_rate in rows:
        lines.append(
            f"| {acks} | {java_rate:,.0f} | {our_rate:,.0f} | {our_rate / java_rate:.2f} |"
        )
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
