"""What a run needs built before it starts, and what is missing.

Every Kafka version a planned cell runs on needs its broker image (`kafka-chaos/kafka:<v>`,
`make images VERSIONS=…`); a version a Java client runs on (the producer's or a group set's
`client: java`) also needs the Java clients' jars of that version (`java_clients/lib/<v>`,
`make java-clients VERSIONS=…`); a Spark consumer set needs Spark's Kafka connector
(`spark_jobs/jars`, `make spark-jars`), and a cluster with link proxies (what a latency,
bandwidth or reset fault needs) the Toxiproxy server (`make toxiproxy`). `make setup` builds
docker/versions.txt's versions only, so a suite over `cluster.version: listed` (the weekly)
needs the others built first. `run` refuses to start a suite (or a shard), or a single
experiment, one of whose cells would find something unbuilt, naming the commands that build
it all, instead of running every other cell and leaving those unknown hours later;
`validate` lists what the cells need and what is missing. The decisions are pure functions
of the cells and the probes the caller passes (the command line passes Docker's image list
and the folders: `local_probes`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from harness.nodes.capabilities import LinkProxies
from harness.nodes.versions import version_key
from harness.spec import Cell, SparkConsumerSpec
from harness.suite.plan import ExperimentPlan

# version -> True (built), False (missing), None (cannot tell: Docker does not answer)
ImageProbe = Callable[[str], bool | None]
JarProbe = Callable[[str], bool]
FileProbe = Callable[[], bool]

IMAGES, JAVA_CLIENTS, SPARK_JARS, TOXIPROXY = "images", "java-clients", "spark-jars", "toxiproxy"
SPARK_JARS_DIR = "spark_jobs/jars"
TOXIPROXY_SERVER = "toxiproxy-server"


@dataclass(frozen=True)
class Needs:
    """What a run's cells need built: broker images and Java clients' jars (by version),
    Spark's Kafka connector, the Toxiproxy server."""

    versions: tuple[str, ...]
    java_versions: tuple[str, ...]
    spark: bool = False  # a Spark consumer set
    toxiproxy: bool = False  # link proxies (a latency, bandwidth or reset fault)


@dataclass(frozen=True)
class Probes:
    """How this machine answers whether each is built."""

    image_built: ImageProbe
    jars_built: JarProbe
    spark_built: FileProbe
    toxiproxy_built: FileProbe


@dataclass(frozen=True)
class Build:
    """One thing the cells need: what it is, its name, whether it is built (None: cannot
    tell), and the make target that builds it (with `version` for a per-version target)."""

    what: str
    name: str
    built: bool | None
    target: str
    version: str = ""


def uses_java(cell: Cell) -> bool:
    """Whether a cell runs a Java client (its producer's, or any consumer set's `client: java`)."""
    return "java" in cell.spec.clients()


def cells_need(cells: Iterable[Cell]) -> Needs:
    """What `cells` need: the versions they run on (oldest first; an upgrade's `to_version`
    too), those a Java client runs on, Spark's connector, the Toxiproxy server."""
    versions: set[str] = set()
    java: set[str] = set()
    spark = toxiproxy = False
    for cell in cells:
        spec = cell.spec
        versions.add(spec.cluster.version)
        # An upgrade's target version runs the same nodes on its own image.
        versions.update(v for f in spec.faults if (v := getattr(f, "to_version", None)))
        if uses_java(cell):
            java.add(spec.cluster.version)
        spark = spark or any(isinstance(c, SparkConsumerSpec) for _, c in spec.consumer_sets())
        toxiproxy = toxiproxy or spec.uses(LinkProxies)  # its server runs in every node
    return Needs(
        tuple(sorted(versions, key=version_key)),
        tuple(sorted(java, key=version_key)),
        spark,
        toxiproxy,
    )


def needed_builds(experiments: Iterable[ExperimentPlan]) -> Needs:
    """What the cells of a suite's `experiments` need (cells_need)."""
    return cells_need(cell for e in experiments for cell in e.cells)


def local_probes() -> Probes:
    """This machine's probes: Docker's image list (None for every version when Docker does not
    answer), the Java clients' jar folders, Spark's jar folder, the virtualenv's bin."""
    import docker
    from docker.errors import DockerException

    from harness.errors import ConfigError
    from harness.nodes.images import image_exists
    from harness.nodes.links import server_binary
    from harness.workload.java.launch import clients_built
    from harness.workload.spark.member import connector_built

    def toxiproxy_built() -> bool:
        try:
            server_binary()
        except ConfigError:
            return False
        return True

    try:
        client = docker.from_env()
        client.ping()
    except DockerException:
        return Probes(lambda _version: None, clients_built, connector_built, toxiproxy_built)

    def image_built(version: str) -> bool | None:
        try:
            return image_exists(client, version)
        except DockerException:
            return None

    return Probes(image_built, clients_built, connector_built, toxiproxy_built)


def builds(needs: Needs, probes: Probes) -> list[Build]:
    """Everything `needs` names, each with what the probes say of it."""
    out = [
        Build("broker image", f"kafka-chaos/kafka:{v}", probes.image_built(v), IMAGES, v)
        for v in needs.versions
    ]
    out += [
        Build("Java clients' jars", f"java_clients/lib/{v}", probes.jars_built(v), JAVA_CLIENTS, v)
        for v in needs.java_versions
    ]
    if needs.spark:
        out.append(Build("Spark Kafka connector", SPARK_JARS_DIR, probes.spark_built(), SPARK_JARS))
    if needs.toxiproxy:
        out.append(Build("Toxiproxy server", TOXIPROXY_SERVER, probes.toxiproxy_built(), TOXIPROXY))
    return out


def build_commands(missing: list[Build]) -> list[str]:
    """The make commands that build `missing` (indented lines), in the order of `builds`."""
    lines = []
    for target in (IMAGES, JAVA_CLIENTS, SPARK_JARS, TOXIPROXY):
        these = [b for b in missing if b.target == target]
        if not these:
            continue
        versions = " ".join(b.version for b in these if b.version)
        lines.append(f'  make {target} VERSIONS="{versions}"' if versions else f"  make {target}")
    if any(b.version for b in missing):
        lines.append(
            "  (make extra-versions builds both for every version of docker/versions-extra.txt)"
        )
    return lines


# What needs a build that has no version (missing_builds' lines).
_NEEDED_BY = {
    SPARK_JARS: "a spark consumer set reads with it",
    TOXIPROXY: "the link proxies (a latency, bandwidth or reset fault) need it",
}


def missing_builds(needs: Needs, probes: Probes) -> list[str]:
    """Lines saying what is not built and the commands that build it; [] when nothing is
    missing (a version whose image the probe cannot tell about is not called missing: the
    cell then says why it could not start, as without this check)."""
    missing = [b for b in builds(needs, probes) if b.built is False]
    if not missing:
        return []
    lines = []
    images = [b for b in missing if b.target == IMAGES]
    if images:
        tags = ", ".join(b.name for b in images)
        lines.append(f"no broker image for {len(images)} version(s) the cells run on: {tags}")
    jars = [b for b in missing if b.target == JAVA_CLIENTS]
    if jars:
        lines.append(
            f"no Java clients' jars for {len(jars)} version(s) a Java client runs on: "
            + ", ".join(b.name for b in jars)
        )
    for b in missing:
        if not b.version:
            lines.append(f"no {b.what} ({b.name}): {_NEEDED_BY[b.target]}")
    lines.append("nothing was run; build them first:")
    return lines + build_commands(missing)


def builds_listing(needs: Needs, probes: Probes) -> list[str]:
    """`validate`'s lines: each thing the cells need and whether it is built on this
    machine, then the commands that build what is missing."""
    every = builds(needs, probes)
    width = max(len(f"{b.what} {b.name}") for b in every)
    shown = {True: "built", False: "MISSING", None: "cannot tell (Docker does not answer)"}
    lines = [f"  {f'{b.what} {b.name}':<{width}}  {shown[b.built]}" for b in every]
    missing = [b for b in every if b.built is False]
    if missing:
        lines.append(f"{len(missing)} missing; build them before `run`:")
        lines += build_commands(missing)
    return lines


__all__ = [
    "Build",
    "Needs",
    "Probes",
    "build_commands",
    "builds",
    "builds_listing",
    "cells_need",
    "local_probes",
    "missing_builds",
    "needed_builds",
    "uses_java",
]
