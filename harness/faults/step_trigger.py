"""`after_step`: the operation step a planned fault counts its `at_s` from.

A fault meant for a phase of an operation (the controller killed during a migration's
dual-write, a leader killed while a broker is down for its upgrade) cannot be timed in
seconds from the workload's start: how long the steps before it take depends on the
machine. So it waits for the step's own `fault.inject` in the history instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

ROLE_WORDS = ("broker", "controller")  # the first step of a node named broker-N / controller-N


def starts_step(word: str, kind: str, fields: Mapping[str, Any]) -> bool:
    """Whether this history event begins a step `word` answers to: an operation step's
    inject (it carries `step_of`) whose phase or target is the word, or whose target is a
    node of that role (`broker` answers to broker-2)."""
    if kind != "fault.inject" or "step_of" not in fields:
        return False
    target = str(fields.get("target", ""))
    if word in (fields.get("phase"), target):
        return True
    return word in ROLE_WORDS and target.startswith(f"{word}-")


def node_words(brokers: Iterable[int], controllers: Iterable[int]) -> list[str]:
    """The names a node's step answers to, as the cluster names its nodes."""
    return [*(f"broker-{b}" for b in brokers), *(f"controller-{c}" for c in controllers)]
