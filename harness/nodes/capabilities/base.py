"""What a cluster capability declares, once, in its own module (harness.nodes.capabilities).

A capability is something every node of a cluster can be built with, off unless asked for
(link proxies, sized log directories, a fake clock, persistent data). Its module says, at
class level: its keys under the spec's `cluster:` (`Fields`: typed and bounded), its
`KafkaCluster` keywords, which are also the pytest plugin's marker keys (`defaults`), its
`with_*` builder method (`Builder`), the words a fault gets when it is missing or refused;
and for one cluster (an instance): its rules, what `cluster.start` records of it and how it
wires a node (`Wiring`). A fault kind says which capabilities it needs (`FaultKind.needs`)
and the spec turns them on (`from_spec`); nothing outside the module reads its keys by name.

Pure: the spec, the faults and the checks' side import this without Docker.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Self, TypeVar, get_args

from harness.common.spec_base import StrictModel
from harness.nodes.topology import DATA_DIR, NodeSpec

Problem = tuple[str, str]  # (key, what is wrong)
# Where a wrapping entry point goes on: the entry points after it, colon-separated; each
# wrapper execs the first and passes the rest on (none left: the image's own).
NEXT_ENTRYPOINT_ENV = "KAFKA_CHAOS_NEXT_ENTRYPOINT"

F = TypeVar("F", bound=StrictModel)


@dataclass(frozen=True)
class Shape:
    """What a capability's rules may read of the cluster it is part of."""

    mode: str
    version: str
    migration_controllers: int = 0


@dataclass(frozen=True)
class Entrypoint:
    """A wrapper entry point mounted into the node. `wraps`: it execs the next one
    (NEXT_ENTRYPOINT_ENV, else the image's own), so it goes outside one that does not."""

    path: str
    wraps: bool = False


@dataclass(frozen=True)
class Wiring:
    """What a node is built with beyond the image's defaults (pure data; harness.nodes.node
    applies it, harness.nodes.topology.kafka_properties reads the listener and directories)."""

    env: Mapping[str, str] = field(default_factory=dict)
    mounts: Mapping[str, str] = field(default_factory=dict)  # host file -> inside, read-only
    extra_hosts: Mapping[str, str] | None = None  # /etc/hosts entries (None: Docker's own)
    entrypoints: tuple[Entrypoint, ...] = ()  # outermost first
    client_backend_port: int | None = None  # Kafka's client listener on loopback, behind a proxy
    log_dirs: tuple[str, ...] = (DATA_DIR,)
    log_dir_mb: int | None = None  # each log directory its own tmpfs of this size
    persistent: bool = False  # log directories on volumes that outlive the container
    devices: tuple[str, ...] = ()  # host devices (`/dev/fuse:/dev/fuse:rwm`)
    # Where Docker's archive API finds the log directories' files, if not at their paths: a
    # filesystem mounted inside the container (plfs) is not what the API reads.
    archive_dirs: tuple[str, ...] | None = None
    cap_add: tuple[str, ...] = ()  # capabilities beyond NET_ADMIN, which every node has
    security_opt: tuple[str, ...] = ()  # `apparmor=unconfined`: Docker's profile denies mount

    def merge(self, other: Wiring) -> Wiring:
        """Both at once: wrapping entry points outside the others; the other's values where
        it sets any (two capabilities never set the same one)."""
        default = Wiring()
        entrypoints = sorted((*self.entrypoints, *other.entrypoints), key=lambda e: not e.wraps)
        return Wiring(
            env={**self.env, **other.env},
            mounts={**self.mounts, **other.mounts},
            extra_hosts=other.extra_hosts if other.extra_hosts is not None else self.extra_hosts,
            entrypoints=tuple(entrypoints),
            client_backend_port=other.client_backend_port or self.client_backend_port,
            log_dirs=other.log_dirs if other.log_dirs != default.log_dirs else self.log_dirs,
            log_dir_mb=other.log_dir_mb if other.log_dir_mb is not None else self.log_dir_mb,
            persistent=self.persistent or other.persistent,
            devices=tuple(dict.fromkeys((*self.devices, *other.devices))),
            archive_dirs=other.archive_dirs
            if other.archive_dirs is not None
            else self.archive_dirs,
            cap_add=tuple(dict.fromkeys((*self.cap_add, *other.cap_add))),
            security_opt=tuple(dict.fromkeys((*self.security_opt, *other.security_opt))),
        )

    def persisted(self) -> Wiring:
        """The same, its log directories on volumes that outlive the container."""
        return dataclasses.replace(self, persistent=True)


class NoFields(StrictModel):
    """A capability with no key under the spec's `cluster:` (the spec derives it from its faults)."""


class BuilderMethods:
    """Base of a capability's `with_*` methods, mixed into the pytest plugin's ClusterBuilder:
    each sets its marker keys in `_raw`, checked when the cluster is built."""

    _raw: dict[str, Any]

    def _set(self, **values: Any) -> Self:
        self._raw.update(values)
        return self


class Capability(Generic[F]):
    """A capability's declaration (class level) and its values in one cluster (an instance).

    `class LinkProxies(Switch[SpecKeys], builder=Builder)`: its spec keys are the model it is
    generic in, its `with_*` methods the builder it names."""

    title: ClassVar[str]  # its name in words (`link proxies`)
    doc: ClassVar[str]  # one line: what a cluster with it is (docs' capability list)
    Fields: ClassVar[type[StrictModel]] = NoFields
    builder: ClassVar[type[BuilderMethods]] = BuilderMethods  # its `with_*` methods
    defaults: ClassVar[Mapping[str, Any]]  # KafkaCluster keyword (= marker key) -> value when off
    missing: ClassVar[str] = "{kind} needs {title}"  # a fault on a cluster without it
    refused: ClassVar[str] = "{kind} needs {title}"  # a planned fault while the spec turns it off

    def __init_subclass__(cls, builder: type[BuilderMethods] | None = None, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if builder is not None:
            cls.builder = builder
        for base in getattr(cls, "__orig_bases__", ()):
            fields = [a for a in get_args(base) if isinstance(a, type)]
            if fields and issubclass(fields[0], StrictModel):
                cls.Fields = fields[0]

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values = {key: values.get(key, default) for key, default in self.defaults.items()}

    # --- the spec ------------------------------------------------------------------------------
    @classmethod
    def from_spec(cls, fields: F, needed: bool) -> dict[str, Any]:
        """Its KafkaCluster keywords for a cell: as the spec's keys say, else as `needed` (a
        planned fault needs it) turns it on."""
        raise NotImplementedError

    @classmethod
    def refuses(cls, fields: F) -> bool:
        """Whether the spec turns it off explicitly (a fault that needs it is then an error)."""
        return False

    def spec_problems(self, shape: Shape) -> list[Problem]:
        """Rules on the cell's resolved values, keyed under `cluster.` (what was expected)."""
        return []

    # --- the pytest plugin's markers -----------------------------------------------------------
    @classmethod
    def marker_problems(cls, raw: Mapping[str, Any]) -> list[Problem]:
        """Its marker keys the spec has no key for, checked (the others: by `Fields`)."""
        return []

    @classmethod
    def from_marker(cls, fields: F, raw: Mapping[str, Any]) -> dict[str, Any]:
        """Its KafkaCluster keywords from a marker (its spec keys already checked in `fields`)."""
        return cls.from_spec(fields, needed=False)

    # --- one cluster ---------------------------------------------------------------------------
    @property
    def on(self) -> bool:
        """Whether the cluster has it (a fault that needs it can act)."""
        return any(self.values[k] != d for k, d in self.defaults.items())

    def problems(self, shape: Shape) -> list[Problem]:
        """Its keywords' rules in a cluster of this shape: (key, ConfigError text)."""
        return [(key, f"{key}: {why}") for key, why in self.spec_problems(shape)]

    def prepare(self) -> None:
        """What a cluster built with it needs from this machine, found when it is built."""

    def record(self) -> dict[str, Any]:
        """What `cluster.start` says of it: each keyword that is not off."""
        return {k: v for k, v in self.values.items() if v != self.defaults[k]}

    def describe(self) -> str:
        """A few words for the plugin's description of a cluster ('' when off)."""
        return f", {self.title}" if self.on else ""

    def wire(self, node: NodeSpec, nodes: Sequence[NodeSpec], run_id: str) -> Wiring:
        """What it adds to one Kafka node (ZooKeeper is never wired); `nodes`: every node
        a name of which may resolve inside it."""
        return Wiring()

    @classmethod
    def summary(cls) -> dict[str, Any]:
        """The declaration as data, for the docs' capability list (the kinds that need it:
        harness.faults.registry.kinds_needing)."""
        builders = [m for m in vars(cls.builder) if m.startswith("with_")]
        return {
            "name": cls.title,
            "doc": cls.doc,
            "spec_keys": [f"cluster.{k}" for k in cls.Fields.model_fields],
            "keywords": dict(cls.defaults),
            "builders": builders,
        }


class Switch(Capability[F]):
    """A capability that is on or off: one keyword (`key`, False when off), under the spec's
    `cluster:` as `bool | None` when it has one there (None: on when a planned fault needs it)."""

    key: ClassVar[str]

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if "key" in cls.__dict__:
            cls.defaults = {cls.key: False}

    def __init__(self, values: Mapping[str, Any]) -> None:
        super().__init__(values)
        self.values[self.key] = bool(self.values[self.key])

    @classmethod
    def from_spec(cls, fields: F, needed: bool) -> dict[str, Any]:
        explicit = getattr(fields, cls.key, None)
        return {cls.key: explicit if explicit is not None else needed}

    @classmethod
    def refuses(cls, fields: F) -> bool:
        return getattr(fields, cls.key, None) is False

    @property
    def on(self) -> bool:
        return bool(self.values[self.key])


def merged(parts: Iterable[Wiring]) -> Wiring:
    out = Wiring()
    for part in parts:
        out = out.merge(part)
    return out
