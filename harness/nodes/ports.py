"""Host ports for the brokers' client listeners, fixed for the cluster's lifetime.

`free_ports` can only say which ports are free *now*: it releases them before Docker
binds them, so another process may take one in between. The cluster therefore treats
Docker's bind failure (`busy_ports`) as "pick again", not as an error.
"""

from __future__ import annotations

import re
import socket
from contextlib import ExitStack
from pathlib import Path

# Docker's words when a published port is taken: by a host process ("listen tcp4
# 127.0.0.1:PORT: bind: address already in use") or by another container ("Bind for
# 127.0.0.1:PORT failed: port is already allocated").
_BIND_FAILED = re.compile(r"address already in use|port is already allocated")
_ADDRESS = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}:(\d+)\b")


def free_ports(count: int) -> list[int]:
    """Distinct ports free on 127.0.0.1 now (held open together so none repeats)."""
    with ExitStack() as stack:
        ports = []
        for _ in range(count):
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind(("127.0.0.1", 0))
            ports.append(sock.getsockname()[1])
        return ports


def busy_ports(error: BaseException) -> list[int] | None:
    """The ports a Docker error says were taken ([] if it names none); None if it is no bind failure."""
    text = str(getattr(error, "explanation", None) or error)
    if not _BIND_FAILED.search(text):
        return None
    return sorted({int(port) for port in _ADDRESS.findall(text)})


HOST_EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")
PORT_MAX = 65535
INNER_RANGE_MIN = 1000  # ports a node's own outgoing connections need at the very least
INNER_FLOOR = 10000  # below: the nodes' fixed listener and metrics ports


def host_ephemeral_range(path: Path = HOST_EPHEMERAL) -> tuple[int, int] | None:
    """The host's ephemeral port range (where `free_ports` draws), None if unreadable."""
    try:
        low, high = (int(x) for x in path.read_text().split())
    except (OSError, ValueError):
        return None
    return low, high


def inner_port_range(host: tuple[int, int] | None) -> str | None:
    """The ephemeral range for a node's container (`net.ipv4.ip_local_port_range`), disjoint
    from the host's: a broker binds its client listener inside at the host port's own number,
    which `free_ports` drew from the host's ephemeral range, and an outgoing connection the
    broker had opened a moment earlier (to a controller, say) could hold that very port
    inside ("Socket server failed to bind to 0.0.0.0:46375: Address already in use", a
    make test run, 2026-11-28). None when no disjoint range of INNER_RANGE_MIN ports fits."""
    if host is None:
        return None
    low, high = host
    if PORT_MAX - high >= INNER_RANGE_MIN:
        return f"{high + 1} {PORT_MAX}"
    if low - 1 - INNER_FLOOR >= INNER_RANGE_MIN:
        return f"{INNER_FLOOR} {low - 1}"
    return None
