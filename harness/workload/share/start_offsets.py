"""How far a share group has settled each partition, as the broker says it: the
share-partition start offset (SPSO), below which every record is acknowledged or archived.

Read with Kafka's own ShareGroupCommand (`kafka-share-groups.sh --describe --offsets`) on
the host JVM, from the cluster version's jars (java_clients/lib/<version>): the Python
client has no admin call for share groups. The drain waits on it: a share set has drained
when the start offset of every partition has reached the log end."""

from __future__ import annotations

import subprocess

from harness.errors import HarnessError
from harness.workload.java.launch import CLIENTS, LOG4J

TOOL = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"
JVM = ("java", "-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
TIMEOUT_S = 60.0


def parse_start_offsets(output: str, topic: str) -> dict[int, int]:
    """partition -> start offset from the tool's table (columns found by their header; a
    partition without state yet, '-', is 0)."""
    header: list[str] | None = None
    out: dict[int, int] = {}
    for line in output.splitlines():
        fields = line.split()
        if "PARTITION" in fields and "START-OFFSET" in fields:
            header = fields
            continue
        if header is None or len(fields) != len(header):
            continue
        row = dict(zip(header, fields, strict=True))
        if row.get("TOPIC") != topic or not row["PARTITION"].isdigit():
            continue
        start = row["START-OFFSET"]
        out[int(row["PARTITION"])] = int(start) if start.lstrip("-").isdigit() else 0
    return out


def start_offsets(bootstrap: str, group: str, topic: str, version: str) -> dict[int, int]:
    """The group's start offsets of `topic`'s partitions; HarnessError when the tool fails."""
    lib = CLIENTS / "lib" / version
    if not (lib / ".complete").is_file():
        raise HarnessError(f"Kafka {version}'s jars are not built ({lib}): make java-clients")
    command = [
        *JVM,
        f"-Dlog4j.configuration=file:{LOG4J}",
        "-cp",
        f"{lib}/*",
        TOOL,
        "--bootstrap-server",
        bootstrap,
        "--describe",
        "--group",
        group,
        "--offsets",
    ]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise HarnessError(f"{TOOL} did not answer within {TIMEOUT_S:.0f} s") from None
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-2:]) or "no output"
        raise HarnessError(f"{TOOL} exited {done.returncode}: {tail}")
    return parse_start_offsets(done.stdout, topic)
