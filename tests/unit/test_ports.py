"""The nodes' ports: the ephemeral range a node's container gets, disjoint from the host's
(where the listener ports are drawn)."""

from __future__ import annotations

from pathlib import Path

from harness.nodes.ports import host_ephemeral_range, inner_port_range


def test_a_nodes_ephemeral_range_sits_above_the_hosts() -> None:
    assert inner_port_range((32768, 60999)) == "61000 65535"  # Linux's default


def test_a_host_range_reaching_the_top_puts_the_nodes_range_below_it() -> None:
    assert inner_port_range((40000, 65535)) == "10000 39999"


def test_no_disjoint_range_leaves_the_containers_default() -> None:
    assert inner_port_range((10500, 65000)) is None
    assert inner_port_range(None) is None


def test_the_hosts_range_is_read_from_proc(tmp_path: Path) -> None:
    given = tmp_path / "ip_local_port_range"
    given.write_text("32768\t60999\n")
    assert host_ephemeral_range(given) == (32768, 60999)
    assert host_ephemeral_range(tmp_path / "none") is None
