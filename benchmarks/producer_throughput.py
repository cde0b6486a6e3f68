"""The workload's ledger producers (librdkafka, and Java: `producer.client: java`) against
Kafka's own ProducerPerformance tool.

All three run on the host against the same 3-broker KRaft cluster (client listener
127.0.0.1), same acks (1 and all; idempotence on exactly for acks=all, as the
ledger producer does), same record size and count, in turn, `--repeat` times.
ProducerPerformance runs from the very jars the broker image was built from
(classpath resolved by Maven from docker/pom.xml). Throughput is records over first send
to last acknowledgement (ProducerPerformance's own figure; the ledger's send_ts and
ack_ts for ours, so neither counts its JVM's start); ack p99 is ProducerPerformance's
99th percentile latency and the ledger's ack_ts - send_ts.

Usage: python benchmarks/producer_throughput.py [--records 200000] [--repeat 3]
       [--out benchmarks/results/producer_throughput.md]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

from harness import DEFAULT_VERSION, KafkaCluster
from harness.common.spec_base import MAX_RATE
from harness.results.history import History
from harness.spec.producer import ProducerSpec
from harness.workload.producer.supervisor import ProducerSupervisor
from harness.workload.producer.thread import ProducerThread
from harness.workload.runtime import Runtime

ROOT = Path(__file__).resolve().parent.parent
RECORD_SIZE = 100
CONTENDERS = ("ProducerPerformance", "ledger (librdkafka)", "ledger (Java)")


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


Figures = tuple[float, float]  # records/s, ack p99 ms


def producer_performance(
    classpath: str, bootstrap: str, topic: str, acks: str, records: int
) -> Figures:
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
    p99 = re.search(r"([\d.]+) ms 99th", summary)
    assert match and p99, summary
    return float(match.group(1)), float(p99.group(1))


def ledger_figures(ledger: Path, records: int) -> Figures:
    table = pq.read_table(ledger, columns=["status", "send_ts", "ack_ts"]).to_pandas()
    acked = table[table["status"] == "ok"]
    if len(acked) != records:
        raise RuntimeError(f"{ledger}: {len(acked)}/{records} acked")
    elapsed_ms = int(acked["ack_ts"].max()) - int(table["send_ts"].min())
    latency = (acked["ack_ts"] - acked["send_ts"]).quantile(0.99)
    return records / (elapsed_ms / 1000), float(latency)


def ledger_producer(
    bootstrap: str, topic: str, acks: str, records: int, client: str, version: str
) -> Figures:
    spec = ProducerSpec.model_validate(
        {
            "client": client,
            "acks": acks,
            "enable_idempotence": acks == "all",
            "rate": MAX_RATE,  # unpaced: far above what one producer reaches
            "records": records,
            "record_size": RECORD_SIZE,
        }
    )
    with tempfile.TemporaryDirectory(prefix="ledger-producer-") as folder:
        runtime = Runtime(bootstrap, topic, Path(folder), 3600.0, 0, version)
        producer: ProducerThread | ProducerSupervisor
        if client == "java":  # a JVM: always a process
            producer = ProducerSupervisor(spec, runtime, History())
        else:
            producer = ProducerThread(spec, runtime, History())
        producer.start()
        producer.join()
        ledger = Path(folder) / "ledger.parquet"
        producer.write(ledger)
        return ledger_figures(ledger, records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks/results/producer_throughput.md"
    )
    args = parser.parse_args()
    classpath = kafka_classpath(DEFAULT_VERSION)
    rows: list[tuple[str, str, float, float, float, float]] = []
    with KafkaCluster("kraft", 3, DEFAULT_VERSION) as cluster:
        for acks in ("1", "all"):
            runs: dict[str, list[Figures]] = {name: [] for name in CONTENDERS}
            for i in range(args.repeat):
                for name in CONTENDERS:
                    topic = f"bench-{acks}-{i}-{CONTENDERS.index(name)}"
                    cluster.create_topic(topic, partitions=6, replication_factor=3)
                    bootstrap = cluster.bootstrap_servers
                    if name == "ProducerPerformance":
                        got = producer_performance(classpath, bootstrap, topic, acks, args.records)
                    else:
                        client = "java" if name == "ledger (Java)" else "librdkafka"
                        got = ledger_producer(
                            bootstrap, topic, acks, args.records, client, DEFAULT_VERSION
                        )
                    runs[name].append(got)
                    print(
                        f"acks={acks} run {i + 1}: {name} {got[0]:,.0f}/s, ack p99 {got[1]:,.0f} ms"
                    )
            for name, figures in runs.items():
                rates = [f[0] for f in figures]
                p99s = [f[1] for f in figures]
                rows.append(
                    (
                        acks,
                        name,
                        statistics.median(rates),
                        min(rates),
                        max(rates),
                        statistics.median(p99s),
                    )
                )
    base = {acks: rate for acks, name, rate, *_ in rows if name == "ProducerPerformance"}
    lines = [
        f"Producer throughput, {args.records:,} records of {RECORD_SIZE} B, 3 brokers KRaft "
        f"{DEFAULT_VERSION}, topic 6 partitions RF 3, median (min-max) of {args.repeat} "
        f"(`python benchmarks/producer_throughput.py --records {args.records} --repeat {args.repeat}`).",
        "",
        "| acks | producer | rec/s | / ProducerPerformance | ack p99 ms |",
        "|---|---|---:|---:|---:|",
    ]
    for acks, name, rate, low, high, p99 in rows:
        lines.append(
            f"| {acks} | {name} | {rate:,.0f} ({low:,.0f}-{high:,.0f}) | {rate / base[acks]:.2f} | {p99:,.0f} |"
        )
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
