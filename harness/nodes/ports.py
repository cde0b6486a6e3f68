"""Host ports for the brokers' client listeners, fixed for the cluster's lifetime.

`free_ports` can only say which ports are free *now*: it releases them before Docker
binds them, so another process may take one in between. The cluster therefore treats
Docker's bind failure (`busy_ports`) as "pick again", not as an error.
"""

from __future__ import annotations

import re
import socket
from contextlib import ExitStack

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
