"""The idempotence-availability cell with Kafka's own Java producer instead of librdkafka.

experiments/incidents/idempotence-availability.yaml found that with acks=all a SIGKILLed
partition leader stops librdkafka's acknowledgements on every partition until the dead
broker is fenced (the live leaders wait for it in their ISR), idempotent or not. This
runs the same cell (KRaft, 3 brokers, topic chaos 6 partitions RF 3, min.insync.replicas 2,
300 records/s for 40 s, the leader of chaos/0 SIGKILLed 8 s after the first
acknowledgement for 10 s) with org.apache.kafka.tools.VerifiableProducer, started inside
a broker that is not killed, keyed (--repeating-keys) so records hash over all partitions.
Per partition and for all together: the longest gap between acknowledgements that ends
after the kill, acked / failed counts, the harness's unavailable_s (gaps > 1 s from the
tool's start to its last acknowledgement), the controller's "Fencing broker" line and the
Java client's log lines about the kill, all timed against the kill.

Usage: python benchmarks/java_producer_availability.py --idempotence true|false
       [--version 3.9.2] [--kill-at-s 8] [--down-s 10] [--out result.json] [--logs-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

from harness import KafkaCluster
from harness.cluster.operations import JAVA
from harness.nodes.node import ClusterNode
from harness.nodes.topology import INTERNAL_PORT

TOPIC = "chaos"
PARTITIONS = 6
RATE = 300
DURATION_S = 40
KEYS = 60  # keys "0".."59": murmur2 spreads them over all 6 partitions
GAP_MS = 1000  # unavailable_s counts gaps longer than max(1 s, 3 records' spacing at 300/s)
BROKER_CONFIG: dict[str, object] = {
    "min.insync.replicas": 2,
    "group.initial.rebalance.delay.ms": 0,
    "broker.heartbeat.interval.ms": 1000,
}
TOOL = "org.apache.kafka.tools.VerifiableProducer"
WORK = "/tmp/java-producer-availability"  # inside the tool's container
TOOL_LIMIT_S = DURATION_S + 120  # `timeout -s KILL` around the JVM
START_TIMEOUT_S = 120.0  # JVM start to the first acknowledgement
POLL_S = 0.25
# The ledger producer's librdkafka settings that matter here (linger.ms 5, metadata
# refresh 5 s); VerifiableProducer forces retries=0 unless the config file says otherwise,
# librdkafka retries until message.timeout.ms. Timeouts stay Java's defaults (request 30 s,
# delivery 120 s; librdkafka's message.timeout.ms is 30 s there): none is reached by a ~10 s stall.
PRODUCER_CONFIG: dict[str, str] = {
    "acks": "all",
    "linger.ms": "5",
    "retries": "2147483647",
    "metadata.max.age.ms": "5000",
}
LOG4J = """log4j.rootLogger=INFO, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d{yyyy-MM-dd HH:mm:ss,SSS}] %p %m (%c)%n
"""
LOG4J2 = """status = error
appender.err.type = Console
appender.err.name = ERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d{yyyy-MM-dd HH:mm:ss,SSS}] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.err.ref = ERR
"""
FENCE_LINES = re.compile(r"Fencing broker|[Uu]nfenc")
CLIENT_LINES = re.compile(
    r"\b(WARN|ERROR)\b|disconnect|ProducerId|epoch|[Ss]equence|Transiting|leader", re.IGNORECASE
)


def write_file(node: ClusterNode, path: str, text: str) -> None:
    code, out = node.exec(
        "sh", "-c", 'mkdir -p "$(dirname "$2")" && printf "%s" "$1" > "$2"', "sh", text, path
    )
    if code != 0:
        raise RuntimeError(f"could not write {path} in {node.name}: {out}")


def read_file(node: ClusterNode, name: str) -> str | None:
    code, out = node.exec("cat", f"{WORK}/{name}")
    return out if code == 0 else None


def start_tool(node: ClusterNode, idempotence: bool) -> dict[str, str]:
    """VerifiableProducer in the background inside `node`: JSON lines to out.jsonl, its
    log to err.log, the pid of its `timeout` wrapper to pid, its exit code to rc."""
    config = {**PRODUCER_CONFIG, "enable.idempotence": str(idempotence).lower()}
    write_file(
        node, f"{WORK}/producer.properties", "".join(f"{k}={v}\n" for k, v in config.items())
    )
    write_file(node, f"{WORK}/log4j.properties", LOG4J)
    write_file(node, f"{WORK}/log4j2.properties", LOG4J2)
    java = [
        *JAVA,
        f"-Dlog4j.configuration=file:{WORK}/log4j.properties",
        f"-Dlog4j2.configurationFile={WORK}/log4j2.properties",
        "-cp",
        "'/opt/kafka/libs/*'",
        TOOL,
        f"--topic {TOPIC} --bootstrap-server {node.name}:{INTERNAL_PORT} --acks -1",
        f"--throughput {RATE} --max-messages {RATE * DURATION_S} --repeating-keys {KEYS}",
        f"--producer.config {WORK}/producer.properties",
    ]
    script = (
        f"cd {WORK} || exit 1; timeout -s KILL {TOOL_LIMIT_S} {' '.join(java)} > out.jsonl 2> err.log & "
        "echo $! > pid; wait $!; echo $? > rc"
    )
    node.docker.exec_run(["sh", "-c", script], detach=True)
    return config


def stop_tool(node: ClusterNode) -> None:
    """Kill the JVM (child of the `timeout` wrapper) and the wrapper if still running."""
    script = (
        f'test -f {WORK}/rc || {{ p=$(cat {WORK}/pid); pkill -KILL -P "$p"; kill -KILL "$p"; }}'
    )
    node.exec("sh", "-c", script)


def first_ack_ms(node: ClusterNode, timeout_s: float) -> int:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        code, out = node.exec("grep", "-m1", "-F", '"producer_send_success"', f"{WORK}/out.jsonl")
        if code == 0 and out.startswith("{"):
            return int(json.loads(out)["timestamp"])
        if read_file(node, "rc") is not None:
            break
        time.sleep(POLL_S)
    err = read_file(node, "err.log") or ""
    raise RuntimeError(
        f"no acknowledgement within {timeout_s:.0f} s; tool log tail:\n{err[-2000:]}"
    )


def wait_done(node: ClusterNode, timeout_s: float) -> int | None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        rc = read_file(node, "rc")
        if rc is not None and rc.strip().lstrip("-").isdigit():
            return int(rc)
        time.sleep(1.0)
    return None


def sleep_until(epoch_ms: int) -> None:
    time.sleep(max(0.0, epoch_ms / 1000 - time.time()))


def now_ms() -> int:
    return int(time.time() * 1000)


def longest_gap(ts: list[int], lo: int, hi: int, around: int) -> tuple[int, int]:
    """Longest gap between consecutive points of ts and {lo, hi} that ends after `around`."""
    pts = sorted({lo, hi, *(t for t in ts if lo <= t <= hi)})
    best = (around, around)
    for a, b in pairwise(pts):
        if b >= around and b - a > best[1] - best[0]:
            best = (a, b)
    return best


def gaps_over(ts: list[int], lo: int, hi: int, gap_ms: int) -> list[tuple[int, int]]:
    pts = sorted({lo, hi, *(t for t in ts if lo <= t <= hi)})
    return [(a, b) for a, b in pairwise(pts) if b - a > gap_ms]


def analyse(events: list[dict[str, Any]], kill_ms: int) -> dict[str, Any]:
    acks = [e for e in events if e.get("name") == "producer_send_success"]
    errors = [e for e in events if e.get("name") == "producer_send_error"]
    startup = next(
        (int(e["timestamp"]) for e in events if e.get("name") == "startup_complete"), None
    )
    if not acks:
        return {"acked": 0, "failed": len(errors), "partitions": {}}
    key_partition = {str(e["key"]): int(e["partition"]) for e in acks}
    all_ts = sorted(int(e["timestamp"]) for e in acks)
    lo, hi = all_ts[0], all_ts[-1]

    def row(ts: list[int], failed: int) -> dict[str, Any]:
        a, b = longest_gap(ts, lo, hi, kill_ms)
        return {
            "acked": len(ts),
            "failed": failed,
            "gap_s": round((b - a) / 1000, 3),
            "gap_from_s": round((a - kill_ms) / 1000, 3),
            "gap_to_s": round((b - kill_ms) / 1000, 3),
        }

    partitions: dict[int, dict[str, Any]] = {}
    for p in range(PARTITIONS):
        ts = sorted(int(e["timestamp"]) for e in acks if int(e["partition"]) == p)
        failed = sum(1 for e in errors if key_partition.get(str(e.get("key"))) == p)
        partitions[p] = row(ts, failed)
    start = startup if startup is not None else lo
    windows = gaps_over(all_ts, start, hi, GAP_MS)
    return {
        "acked": len(acks),
        "failed": len(errors),
        "errors": sorted({f"{e.get('exception')}: {e.get('message')}" for e in errors})[:10],
        "partitions": partitions,
        "all": row(all_ts, len(errors)),
        "start_gap_s": round((lo - start) / 1000, 3),
        "unavailable_s": round(sum(b - a for a, b in windows) / 1000, 3),
        "unavailable_windows_s": [
            [round((a - kill_ms) / 1000, 3), round((b - kill_ms) / 1000, 3)] for a, b in windows
        ],
        "last_ack_s": round((hi - kill_ms) / 1000, 3),
    }


def broker_lines(cluster: KafkaCluster, kill_ms: int) -> list[dict[str, Any]]:
    """Fence / unfence lines of every node's log since 5 s before the kill (docker's timestamps)."""
    out: list[dict[str, Any]] = []
    for node in cluster.nodes:
        raw: bytes = node.docker.logs(timestamps=True)
        for line in raw.decode(errors="replace").splitlines():
            stamp, _, text = line.partition(" ")
            if not FENCE_LINES.search(text):
                continue
            ms = int(datetime.fromisoformat(stamp[:26] + "+00:00").timestamp() * 1000)
            if ms >= kill_ms - 5000:
                out.append(
                    {"node": node.name, "t_s": round((ms - kill_ms) / 1000, 3), "line": text[:300]}
                )
    return sorted(out, key=lambda x: float(x["t_s"]))


def client_lines(log: str, kill_ms: int, limit: int = 40) -> list[dict[str, Any]]:
    """The Java client's log lines about the kill (WARN/ERROR, disconnects, PID, epochs...):
    the first of each shape (digits ignored) from 1 s before the kill, with its count."""
    shapes: dict[str, dict[str, Any]] = {}
    for line in log.splitlines():
        if not line.startswith("[") or not CLIENT_LINES.search(line):
            continue
        try:
            ts = datetime.strptime(line[1:24], "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=UTC)
        except ValueError:
            continue
        t_s = (ts.timestamp() * 1000 - kill_ms) / 1000
        shape = re.sub(r"\d+", "N", line[26:])
        if t_s < -1:
            continue
        if shape in shapes:
            shapes[shape]["count"] += 1
            shapes[shape]["last_t_s"] = round(t_s, 3)
        elif len(shapes) < limit:
            shapes[shape] = {
                "t_s": round(t_s, 3),
                "last_t_s": round(t_s, 3),
                "count": 1,
                "line": line[26:][:300],
            }
    return list(shapes.values())


def print_report(result: dict[str, Any]) -> None:
    res = result["result"]
    print(
        f"\n== Java producer, idempotence={result['idempotence']}, Kafka {result['version']}: "
        f"killed broker {result['victim']} (leader of {TOPIC}/0) at {result['kill_at_s']} s "
        f"after the first ack, restarted {result['down_s']} s later; tool on broker {result['tool_broker']}"
    )
    print("   part leader  acked failed  longest gap s   from -> to (s after kill)")
    for p, r in res.get("partitions", {}).items():
        print(
            f"   {p:>4} {result['leaders_before'].get(p)!s:>6} {r['acked']:6d} {r['failed']:6d}"
            f"  {r['gap_s']:12.2f}   {r['gap_from_s']:+7.2f} -> {r['gap_to_s']:+7.2f}"
        )
    if "all" in res:
        r = res["all"]
        print(
            f"    all {'':>6} {r['acked']:6d} {r['failed']:6d}  {r['gap_s']:12.2f}"
            f"   {r['gap_from_s']:+7.2f} -> {r['gap_to_s']:+7.2f}"
        )
        print(
            f"   unavailable_s {res['unavailable_s']:.2f} (windows {res['unavailable_windows_s']}, "
            f"start gap {res['start_gap_s']:.2f} s)"
        )
    t = {
        k: round((v - result["times_ms"]["kill"]) / 1000, 2) for k, v in result["times_ms"].items()
    }
    print(
        f"   times s after the kill call: {t}; client saw broker {result['victim']} go at {result['disconnect_s']}"
    )
    for f in result["broker_lines"]:
        print(f"   broker {f['t_s']:+7.2f} {f['node']}: {f['line'][:150]}")
    for c in result["client_lines"][:15]:
        print(f"   client {c['t_s']:+7.2f} x{c['count']:<4d} {c['line'][:150]}")


def run(args: argparse.Namespace) -> dict[str, Any]:
    idempotence = args.idempotence == "true"
    with KafkaCluster(
        mode="kraft",
        brokers=3,
        version=args.version,
        broker_config=BROKER_CONFIG,
        logs_dir=args.logs_dir,
    ) as cluster:
        cluster.create_topic(TOPIC, PARTITIONS, 3)
        cluster.wait_all_led(TOPIC, PARTITIONS, 60)
        leaders = cluster.leaders(TOPIC)
        victim = leaders[0]
        if victim is None:
            raise RuntimeError(f"{TOPIC}/0 has no leader")
        tool = next(n for n in cluster.broker_nodes if n.spec.kafka_id != victim)
        controller = cluster.controller()
        try:
            config = start_tool(tool, idempotence)
            first = first_ack_ms(tool, START_TIMEOUT_S)
            sleep_until(first + int(args.kill_at_s * 1000))
            kill_ms = now_ms()
            fault = cluster.kill(victim)
            killed_ms = now_ms()
            sleep_until(kill_ms + int(args.down_s * 1000))
            heal_ms = now_ms()
            fault.heal()  # starts it and waits for its start-up line
            back_ms = now_ms()
            rc = wait_done(tool, TOOL_LIMIT_S)
        finally:
            stop_tool(tool)
        out = read_file(tool, "out.jsonl") or ""
        err = read_file(tool, "err.log") or ""
        events = []
        for line in out.splitlines():
            if line.startswith("{"):
                try:
                    events.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        result: dict[str, Any] = {
            "version": args.version,
            "idempotence": idempotence,
            "kill_at_s": args.kill_at_s,
            "down_s": args.down_s,
            "broker_config": BROKER_CONFIG,
            "producer_config": config,
            "tool_broker": tool.spec.kafka_id,
            "victim": victim,
            "controller_before": controller,
            "leaders_before": leaders,
            "tool_rc": rc,
            "times_ms": {
                "first_ack": first,
                "kill": kill_ms,
                "kill_returned": killed_ms,
                "restart": heal_ms,
                "restarted": back_ms,
            },
            "tool_data": next((e for e in events if e.get("name") == "tool_data"), None),
            "example_line": next(
                (ln for ln in out.splitlines() if "producer_send_success" in ln), None
            ),
            "result": analyse(events, kill_ms),
            "broker_lines": broker_lines(cluster, kill_ms),
            "client_lines": client_lines(err, kill_ms),
        }
        gone = f"Node {victim} disconnected"
        result["disconnect_s"] = next(
            (
                c["t_s"]
                for c in result["client_lines"]
                if c["line"].find(gone) >= 0 and c["t_s"] >= 0
            ),
            None,
        )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--idempotence", choices=["true", "false"], required=True)
    parser.add_argument("--version", default="3.9.2")
    parser.add_argument(
        "--kill-at-s", type=float, default=8.0, help="after the first acknowledgement"
    )
    parser.add_argument("--down-s", type=float, default=10.0)
    parser.add_argument("--out", type=Path, default=Path("java_producer_availability.json"))
    parser.add_argument("--logs-dir", type=Path, default=None, help="save every node's log here")
    args = parser.parse_args()
    result = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print_report(result)
    print(f"   written: {args.out}")


if __name__ == "__main__":
    main()
