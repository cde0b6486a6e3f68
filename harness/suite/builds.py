"""What a suite run needs built before it starts, and what is missing.

Every Kafka version a planned cell runs on needs its broker image (`kafka-chaos/kafka:<v>`,
`make images VERSIONS=…`); a version a Java client runs on (the producer's or a group set's
`client: java`) also needs the Java clients' jars of that version (`java_clients/lib/<v>`,
`make java-clients VERSIONS=…`). `make setup` builds docker/versions.txt's versions only, so a
suite over `cluster.version: listed` (the weekly) needs the others built first. `run` refuses
to start a suite (or a shard) one of whose cells would find its version unbuilt, naming the
command that builds them all, instead of running every other cell and leaving those unknown
hours later. The decisions are pure functions of the plan and two probes the caller passes
(the command line passes Docker's image list and the jar folders).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from harness.nodes.versions import version_key
from harness.spec import Cell, GroupConsumerSpec
from harness.suite.plan import ExperimentPlan

# version -> True (built), False (missing), None (cannot tell: Docker does not answer)
ImageProbe = Callable[[str], bool | None]
JarProbe = Callable[[str], bool]


@dataclass(frozen=True)
class Needs:
    """The versions a run's cells need: broker images, and Java clients' jars."""

    versions: tuple[str, ...]
    java_versions: tuple[str, ...]


def uses_java(cell: Cell) -> bool:
    """Whether a cell runs a Java client (its producer's, or a group set's `client: java`)."""
    spec = cell.spec
    if spec.producer.client == "java":
        return True
    return any(
        isinstance(c, GroupConsumerSpec) and c.client == "java" for _, c in spec.consumer_sets()
    )


def needed_builds(experiments: Iterable[ExperimentPlan]) -> Needs:
    """The versions the cells of `experiments` run on (oldest first; an upgrade's `to_version`
    too), and those a Java client runs on."""
    versions: set[str] = set()
    java: set[str] = set()
    for e in experiments:
        for cell in e.cells:
            versions.add(cell.spec.cluster.version)
            # An upgrade's target version runs the same nodes on its own image.
            versions.update(v for f in cell.spec.faults if (v := getattr(f, "to_version", None)))
            if uses_java(cell):
                java.add(cell.spec.cluster.version)
    return Needs(tuple(sorted(versions, key=version_key)), tuple(sorted(java, key=version_key)))


def local_probes() -> tuple[ImageProbe, JarProbe]:
    """This machine's probes: Docker's image list (None for every version when Docker does not
    answer) and the Java clients' jar folders."""
    import docker
    from docker.errors import DockerException

    from harness.nodes.images import image_exists
    from harness.workload.java.launch import clients_built

    try:
        client = docker.from_env()
        client.ping()
    except DockerException:
        return (lambda _version: None), clients_built

    def image_built(version: str) -> bool | None:
        try:
            return image_exists(client, version)
        except DockerException:
            return None

    return image_built, clients_built


def missing_builds(needs: Needs, image_built: ImageProbe, jars_built: JarProbe) -> list[str]:
    """Lines saying what is not built and the commands that build it; [] when nothing is
    missing (a version whose image the probe cannot tell about is not called missing: the
    cell then says why it could not start, as without this check)."""
    images = [v for v in needs.versions if image_built(v) is False]
    jars = [v for v in needs.java_versions if not jars_built(v)]
    if not images and not jars:
        return []
    lines = []
    if images:
        tags = ", ".join(f"kafka-chaos/kafka:{v}" for v in images)
        lines.append(f"no broker image for {len(images)} version(s) the cells run on: {tags}")
    if jars:
        lines.append(
            f"no Java clients' jars for {len(jars)} version(s) a Java client runs on: "
            + ", ".join(f"java_clients/lib/{v}" for v in jars)
        )
    lines.append("nothing was run; build them first:")
    if images:
        lines.append(f'  make images VERSIONS="{" ".join(images)}"')
    if jars:
        lines.append(f'  make java-clients VERSIONS="{" ".join(jars)}"')
    lines.append(
        "  (make extra-versions builds both for every version of docker/versions-extra.txt)"
    )
    return lines


__all__ = [
    "ImageProbe",
    "JarProbe",
    "Needs",
    "local_probes",
    "missing_builds",
    "needed_builds",
    "uses_java",
]
