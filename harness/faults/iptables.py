"""iptables rules inside a node's own network namespace (the container has NET_ADMIN).

Each fault owns one chain, KC_<fault id>, jumped to from INPUT and OUTPUT, so
faults that overlap heal independently and heal_all can drop every chain.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from harness.errors import FaultError
from harness.faults.control import Node

CHAIN_PREFIX = "KC_"


def chain_for(fault_id: int) -> str:
    return f"{CHAIN_PREFIX}{fault_id}"


def install(node: Node, chain: str, rules: Sequence[Sequence[str]]) -> None:
    lines = [f"iptables -w -N {chain}"]
    lines += [f"iptables -w -A {chain} {shlex.join(rule)}" for rule in rules]
    lines += [f"iptables -w -I INPUT -j {chain}", f"iptables -w -I OUTPUT -j {chain}"]
    code, output = node.exec("sh", "-ec", "\n".join(lines))
    if code != 0:
        raise FaultError(f"iptables on {node.name} failed (exit {code}): {output.strip()}")


def _drop_chain_script(chain: str) -> str:
    return (
        f"iptables -w -D INPUT -j {chain} 2>/dev/null; iptables -w -D OUTPUT -j {chain} 2>/dev/null; "
        f"iptables -w -F {chain} 2>/dev/null; iptables -w -X {chain} 2>/dev/null; true"
    )


def remove(node: Node, chain: str) -> None:
    if node.is_up():
        node.exec("sh", "-c", _drop_chain_script(chain))


def remove_all(node: Node) -> None:
    """Drop every chain any fault left in this node (heal_all's sweep)."""
    if not node.is_up():
        return
    code, output = node.exec("iptables", "-w", "-S")
    if code != 0:
        return
    chains = {w for line in output.splitlines() for w in line.split() if w.startswith(CHAIN_PREFIX)}
    if chains:
        node.exec("sh", "-c", "; ".join(_drop_chain_script(c) for c in sorted(chains)))


def drop_peers(peer_ips: Sequence[str]) -> list[list[str]]:
    """Drop everything to and from the given addresses."""
    return [
        rule for ip in peer_ips for rule in (["-s", ip, "-j", "DROP"], ["-d", ip, "-j", "DROP"])
    ]


def drop_port(port: int) -> list[list[str]]:
    """Drop TCP traffic to and from a local listening port."""
    return [
        ["-p", "tcp", "--dport", str(port), "-j", "DROP"],
        ["-p", "tcp", "--sport", str(port), "-j", "DROP"],
    ]


def drop_port_with(port: int, peer_ips: Sequence[str]) -> list[list[str]]:
    """Drop TCP traffic with the given addresses where either end is `port` (one listener's
    traffic, whichever side listens); everything else to and from them still flows."""
    return [
        [addr, ip, "-p", "tcp", end, str(port), "-j", "DROP"]
        for ip in peer_ips
        for addr in ("-s", "-d")
        for end in ("--dport", "--sport")
    ]


def random_drop(probability: float) -> list[str]:
    """Drop a random fraction of the packets that reach this rule (the statistic match)."""
    rule = ["-m", "statistic", "--mode", "random", "--probability"]
    return [*rule, f"{probability:.6f}", "-j", "DROP"]


def packet_counts(node: Node, chain: str) -> list[tuple[int, str]] | None:
    """(packets, target) of each rule of the chain in order ("" for a rule without a target,
    which only counts); None when the chain cannot be read (node down, chain gone)."""
    if not node.is_up():
        return None
    code, output = node.exec("iptables", "-w", "-L", chain, "-v", "-n", "-x")
    if code != 0:
        return None
    rows = []
    for line in output.splitlines()[2:]:  # "Chain KC_1 (...)", then the column names
        words = line.split()
        if len(words) >= 3 and words[0].isdigit():
            target = words[2] if words[2].isupper() else ""  # else it is the protocol column
            rows.append((int(words[0]), target))
    return rows
