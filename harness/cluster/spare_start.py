"""Starting a spare node while the cluster runs: a broker for add-broker, a controller for
add-controller. One way for both, so a spare that fails is never left half in the cluster.

Spares are planned with the cluster, their ports picked at start (harness.cluster.wiring);
a port taken since is picked again here, since the spare never advertised the old one.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from typing import Protocol

from docker.errors import APIError, DockerException

from harness.nodes.images import docker_client, require_image
from harness.nodes.node import ClusterNode
from harness.nodes.ports import busy_ports, free_ports
from harness.nodes.topology import NodeSpec

PORT_ATTEMPTS = 5  # picks of host ports before a start gives up on bind failures


class Spared(Protocol):
    """What starting a spare needs of the cluster."""

    version: str
    run_id: str
    nodes: list[ClusterNode]
    retired: list[ClusterNode]

    def _running(self) -> object: ...
    def _node(self, spec: NodeSpec, image: str | None = None) -> ClusterNode: ...


def start_spare(
    cluster: Spared,
    spares: list[NodeSpec],
    spec: NodeSpec,
    ready: Callable[[ClusterNode], None],
) -> ClusterNode:
    """Take `spec` off `spares`, create its container, wait until `ready` returns, then
    count it in `nodes`.

    A cluster not running raises before the spare leaves `spares` (a call outside `with`
    loses nothing). The node joins `nodes` only when ready, so admin requests, heal_all and
    wait_registered count it from that moment on. A spare that does not come up is stopped
    and kept with the retired (its log is saved): it is no spare any more."""
    cluster._running()  # HarnessError if the cluster is not running
    spares.remove(spec)
    node = _create(cluster, spec)
    try:
        ready(node)
    except BaseException:
        with contextlib.suppress(Exception):
            node.stop()
        cluster.retired.append(node)
        raise
    cluster.nodes.append(node)
    return node


def _create(cluster: Spared, spec: NodeSpec) -> ClusterNode:
    """The spare's container on the cluster network, of the cluster's image now (after an
    upgrade: the new one); new host ports if its own were taken since."""
    image = require_image(docker_client(), cluster.version)
    for attempt in range(1, PORT_ATTEMPTS + 1):
        node = cluster._node(spec, image)
        try:
            node.create()
            return node
        except APIError as exc:
            if busy_ports(exc) is None or attempt == PORT_ATTEMPTS:
                raise
        with contextlib.suppress(DockerException):
            docker_client().containers.get(f"kc-{cluster.run_id}-{spec.name}").remove(force=True)
        spec = dataclasses.replace(spec, host_port=free_ports(1)[0])
        if spec.metrics_port is not None:
            spec = dataclasses.replace(spec, metrics_port=free_ports(1)[0])
    raise AssertionError("unreachable: the last attempt returns or raises")
