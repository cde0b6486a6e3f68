"""Toxiproxy's HTTP API in a proxied node (harness.nodes.links): add and remove toxics.

Reached at the node's address on the cluster network (the host routes to it), never
published: the API is the harness's, not the clients'.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from harness.errors import FaultError
from harness.nodes.links import API_PORT

TIMEOUT_S = 5.0


def _call(address: str, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        f"http://{address}:{API_PORT}{path}",
        data=data,
        method=method,
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
        raw = response.read()
    return json.loads(raw) if raw else None


def add_toxic(
    address: str, proxy: str, name: str, kind: str, stream: str, attributes: dict[str, int]
) -> None:
    """A toxic on one stream of one proxy (FaultError naming the proxy if refused)."""
    body = {"name": name, "type": kind, "stream": stream, "toxicity": 1.0, "attributes": attributes}
    try:
        _call(address, "POST", f"/proxies/{proxy}/toxics", body)
    except (urllib.error.URLError, OSError) as exc:
        raise FaultError(f"toxiproxy at {address}: {kind} on {proxy} ({stream}): {exc}") from exc


def remove_toxic(address: str, proxy: str, name: str) -> bool:
    """True if removed; False if it was not there any more (the node restarted meanwhile)."""
    try:
        _call(address, "DELETE", f"/proxies/{proxy}/toxics/{name}")
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return False
        raise FaultError(f"toxiproxy at {address}: removing {name} from {proxy}: {exc}") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise FaultError(f"toxiproxy at {address}: removing {name} from {proxy}: {exc}") from exc
    return True


def reset(address: str) -> None:
    """Every toxic of every proxy removed, every proxy enabled (Toxiproxy's POST /reset)."""
    try:
        _call(address, "POST", "/reset")
    except (urllib.error.URLError, OSError) as exc:
        raise FaultError(f"toxiproxy at {address}: reset: {exc}") from exc


def toxic_names(address: str, proxy: str) -> list[str]:
    """The toxics on one proxy now."""
    toxics = _call(address, "GET", f"/proxies/{proxy}/toxics") or []
    return [str(t["name"]) for t in toxics]
