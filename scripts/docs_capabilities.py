"""docs/adding-a-fault.md's list of cluster capabilities, read from their declarations.

One row per capability of harness.nodes.capabilities.CAPABILITIES, in the registry's order:
its module, its keys under the spec's `cluster:`, its KafkaCluster keywords (the pytest
plugin's marker keys) with their values when off, its `with_*` methods, what
`cluster.start` records, and the fault kinds that need it (their `needs`).
"""

from __future__ import annotations

from harness.faults.registry import kinds_needing
from harness.nodes.capabilities import CAPABILITIES


def _codes(items: list[str]) -> str:
    return ", ".join(f"`{i}`" for i in items) or "-"


def _needed_by(kinds: tuple[str, ...]) -> str:
    if not kinds:
        return "-"
    return f"the {_codes(list(kinds))} kind" + ("s" if len(kinds) > 1 else "")


def capability_table() -> str:
    lines = [
        "| capability | module | spec keys | KafkaCluster keywords = marker keys (off) "
        "| builder | `cluster.start` carries | needed by |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in CAPABILITIES:
        s = c.summary()
        keywords = ", ".join(f"`{k}={v!r}`" for k, v in s["keywords"].items())
        cells = [
            f"{s['name']}: {s['doc']}",
            f"`{c.__module__.replace('.', '/')}.py`",
            _codes(s["spec_keys"]),
            keywords,
            _codes([f"{b}()" for b in s["builders"]]),
            _codes(list(s["keywords"])) + " (when not off)",
            _needed_by(kinds_needing(c)),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
