"""What the brokers say of a share group, through Kafka's own ShareGroupCommand
(`kafka-share-groups.sh --describe`), run on the host JVM from the cluster version's jars
(java_clients/lib/<version>): the Python client has no admin call for share groups.

- `--members`: each member (CLIENT-ID: the member's name) with the partitions the group
  assigned it. The workload starts once each is assigned: a member that has subscribed is
  not yet in the group (on 4.3.1 the first assignment came 5 s after subscribe).
- `--offsets`: what is left of each partition, the records neither acknowledged nor
  archived (LAG: the log end, less the share-partition start offset, less the records past
  it already settled; KIP-1226). The drain waits until no partition has any. The start
  offset alone does not say it: on 4.3.1 a group that had accepted all 300 records of two
  partitions still showed START-OFFSET 0 (and LAG 0) seconds later.
"""

from __future__ import annotations

import subprocess

from harness.errors import HarnessError
from harness.workload.java.launch import CLIENTS, LOG4J

TOOL = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"
JVM = ("java", "-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
TIMEOUT_S = 60.0


def parse_share_lag(output: str, topic: str, ends: dict[int, int]) -> dict[int, int | None]:
    """partition -> records left from the tool's table (columns found by their header): its
    LAG, else (a version without the column) the end less START-OFFSET; None when the
    table has no number for it (no state yet, '-')."""
    header: list[str] | None = None
    out: dict[int, int | None] = {}
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
        partition = int(row["PARTITION"])
        lag, start = row.get("LAG", ""), row["START-OFFSET"]
        if lag.isdigit():
            out[partition] = int(lag)
        elif "LAG" not in row and start.isdigit() and partition in ends:
            out[partition] = max(0, ends[partition] - int(start))
        else:
            out[partition] = None
    return out


def parse_members(output: str, topic: str) -> dict[str, set[int]]:
    """CLIENT-ID -> the partitions of `topic` assigned to it (ASSIGNMENT `topic:0,2`, topics
    separated by ';'), from the `--members` table; a client listed twice (a killed member
    and its successor) gets both's."""
    header: list[str] | None = None
    out: dict[str, set[int]] = {}
    for line in output.splitlines():
        fields = line.split()
        if "CLIENT-ID" in fields and "#PARTITIONS" in fields:
            header = fields
            continue
        if header is None or len(fields) not in (len(header), len(header) - 1):
            continue
        row = dict(zip(header, fields, strict=False))
        client = row.get("CLIENT-ID")
        if client is None:
            continue
        parts = out.setdefault(client, set())
        for item in row.get("ASSIGNMENT", "").split(";"):
            name, _, numbers = item.rpartition(":")
            if name == topic:
                parts |= {int(n) for n in numbers.split(",") if n.isdigit()}
    return out


def share_lag(
    bootstrap: str, group: str, topic: str, version: str, ends: dict[int, int]
) -> dict[int, int | None]:
    """The group's records left per partition of `topic` (parse_share_lag); HarnessError
    when the tool fails."""
    return parse_share_lag(_describe(bootstrap, group, version, "--offsets"), topic, ends)


def assigned_members(bootstrap: str, group: str, topic: str, version: str) -> dict[str, set[int]]:
    """The group's members (client ids) and their partitions of `topic`; HarnessError when
    the tool fails (a group with no member yet: GroupIdNotFoundException)."""
    return parse_members(_describe(bootstrap, group, version, "--members"), topic)


def _describe(bootstrap: str, group: str, version: str, what: str) -> str:
    """The tool's `--describe <what>` output; HarnessError when it fails."""
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
        what,
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
    return done.stdout
