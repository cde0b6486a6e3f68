"""KRaft's dynamic controller quorum (KIP-853, Kafka 3.9+): how each node's storage is
formatted, and Kafka's own quorum tool, MetadataQuorumCommand (pure: argv and its answers).

Kafka's operations guide ("Bootstrap with Multiple Controllers", "Formatting Brokers and New
Controllers", "Controller membership changes"): the initial controllers are formatted with
`--initial-controllers id@host:port:directory-id,...`, the same value on each of them; every
other node (brokers, controllers that join later) with `--no-initial-controllers`. The
directory ids are the harness's, derived from the cluster id and the node id, so one cluster
always names the same ones and `remove-controller` can name a voter's without asking it.
The arguments reach the container's `kafka.tools.StorageTool format` through
FORMAT_ARGS_ENV (docker/entrypoint.sh); a static cluster does not set it.
"""

from __future__ import annotations

import base64
import json
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.nodes.topology import CONTROLLER_PORT, NodeSpec

FORMAT_ARGS_ENV = "KAFKA_CHAOS_FORMAT_ARGS"
NO_INITIAL_CONTROLLERS = "--no-initial-controllers"
# Where docker/entrypoint.sh writes a Kafka node's properties: add-controller's --command-config.
NODE_PROPERTIES = "/etc/kafka-chaos/kafka.properties"
QUORUM_TOOL = "org.apache.kafka.tools.MetadataQuorumCommand"
# A short-lived tool in a busy container (as harness.cluster.operations runs its tools).
TOOL_JAVA = ("java", "-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
_NAMESPACE = uuid.UUID("6b61666b-612d-6368-616f-732d71756f72")  # fixed: ids repeat per cluster


def directory_id(cluster_id: str, node_id: int) -> str:
    """The metadata log directory id of `node_id` in this cluster, in Kafka's Uuid text form
    (22 url-safe base64 chars), the same every time; never one starting with '-' (a tool's
    argument parser would take it for an option)."""
    salt = 0
    while True:
        raw = uuid.uuid5(_NAMESPACE, f"{cluster_id}/{node_id}/{salt}").bytes
        text = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        if not text.startswith("-"):
            return text
        salt += 1


def initial_controllers(voters: Sequence[NodeSpec], cluster_id: str) -> str:
    """`--initial-controllers`' value: `id@host:port:directory-id` of each initial voter."""
    return ",".join(
        f"{v.kafka_id}@{v.name}:{CONTROLLER_PORT}:{directory_id(cluster_id, v.kafka_id)}"
        for v in voters
    )


def format_args(node: NodeSpec, voters: Sequence[NodeSpec], cluster_id: str) -> str:
    """What `node` is formatted with besides the cluster id: the initial voter set for one of
    `voters`, `--no-initial-controllers` for every other node (it learns the voters from
    the quorum: a broker, a spare controller that joins as an observer)."""
    if any(v.node_id == node.node_id for v in voters):
        return f"--initial-controllers {initial_controllers(voters, cluster_id)}"
    return NO_INITIAL_CONTROLLERS


def gist(output: str) -> str:
    """A quorum tool's output in a line: its last two lines that are not log4j's noise."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip() and "log4j" not in ln]
    return " | ".join(lines[-2:]) or "no output"


def quorum_argv(bootstrap: Sequence[str], *command: str, config: str | None = None) -> list[str]:
    """MetadataQuorumCommand asking the controllers at `bootstrap` (names; port 9093):
    `describe --status`, `add-controller` (with `config`: the joining controller's
    properties), `remove-controller --controller-id N --controller-directory-id D`."""
    argv = [*TOOL_JAVA, "-cp", "/opt/kafka/libs/*", QUORUM_TOOL]
    argv += ["--bootstrap-controller", ",".join(f"{n}:{CONTROLLER_PORT}" for n in bootstrap)]
    if config is not None:
        argv += ["--command-config", config]
    return [*argv, *command]


def add_controller_argv(bootstrap: Sequence[str]) -> list[str]:
    """Run inside the joining controller: the tool reads its id, directory id (meta.properties
    of its metadata log directory) and controller endpoint from its own properties."""
    return quorum_argv(bootstrap, "add-controller", config=NODE_PROPERTIES)


def remove_controller_argv(bootstrap: Sequence[str], node_id: int, directory: str) -> list[str]:
    return quorum_argv(
        bootstrap,
        "remove-controller",
        "--controller-id",
        str(node_id),
        "--controller-directory-id",
        directory,
    )


def describe_argv(bootstrap: Sequence[str]) -> list[str]:
    return quorum_argv(bootstrap, "describe", "--status")


@dataclass(frozen=True)
class QuorumStatus:
    """`describe --status` as data: the leader, the voters (id -> directory id, "" when the
    tool names none: a static quorum) and the observers' ids."""

    leader: int | None
    voters: dict[int, str] = field(default_factory=dict)
    observers: tuple[int, ...] = ()

    @property
    def voter_ids(self) -> list[int]:
        return sorted(self.voters)


_FIELD = re.compile(r"^([A-Za-z]+):\s*(.*)$")


def parse_status(text: str) -> QuorumStatus | None:
    """The tool's `describe --status` output as a QuorumStatus; None when it holds no voters
    line (the tool failed). A field may run over several lines (a long voter list)."""
    fields: dict[str, str] = {}
    last: str | None = None
    for line in text.splitlines():
        m = _FIELD.match(line)
        if m:
            last = m[1]
            fields[last] = m[2].strip()
        elif last is not None and line.startswith((" ", "\t")):
            fields[last] += line.strip()
    voters = _replicas(fields.get("CurrentVoters", ""))
    observers = _replicas(fields.get("CurrentObservers", "[]"))
    if not voters:  # no line, or one the tool did not finish: no answer
        return None
    leader = fields.get("LeaderId", "")
    return QuorumStatus(
        leader=int(leader) if re.fullmatch(r"\d+", leader) else None,
        voters=voters,
        observers=tuple(sorted(observers or {})),
    )


def _replicas(text: str) -> dict[int, str] | None:
    """id -> directory id of a `[1, 2]` or `[{"id": 1, "directoryId": "..."}, ...]` list
    (the JSON the tool prints); None when the text is no such list."""
    try:
        items = json.loads(text)
    except ValueError:
        return None
    if not isinstance(items, list):
        return None
    out: dict[int, str] = {}
    for item in items:
        if isinstance(item, int) and not isinstance(item, bool):
            out[item] = ""
        elif isinstance(item, dict) and isinstance(item.get("id"), int):
            out[item["id"]] = str(item.get("directoryId") or "")
        else:
            return None
    return out
