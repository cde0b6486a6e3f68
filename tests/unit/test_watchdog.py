"""The watchdog's decisions, on a fake Docker client (the real one: tests/integration/test_cleanup)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

import pytest

from harness.nodes.reaper import RUN_LABEL, owner_label
from harness.nodes.watchdog import RESOURCES_EVERY_S, watch


@dataclass
class FakeResource:
    name: str
    labels: dict[str, str]
    store: list[FakeResource]

    @property
    def attrs(self) -> dict[str, Any]:
        return {"Labels": self.labels}

    def remove(self, **_kw: Any) -> None:
        self.store.remove(self)


@dataclass
class FakeCollection:
    items: list[FakeResource] = field(default_factory=list)
    lists: int = 0

    def list(self, all: bool = False, filters: dict[str, str] | None = None) -> list[FakeResource]:
        self.lists += 1
        key, _, value = (filters or {})["label"].partition("=")
        return [r for r in self.items if r.labels.get(key) == value]


class FakeDocker:
    def __init__(self, run_id: str | None = None) -> None:
        self.containers = FakeCollection()
        self.networks = FakeCollection()
        self.volumes = FakeCollection()  # size-limited log directories (harness.nodes.disks)
        if run_id:
            self.add(run_id)

    def add(self, run_id: str) -> None:
        labels = {RUN_LABEL: run_id}
        c, n = self.containers.items, self.networks.items
        c.append(FakeResource(f"kc-{run_id}-broker-1", labels, c))
        n.append(FakeResource(f"kc-{run_id}", labels, n))
        v = self.volumes.items
        v.append(FakeResource(f"kc-{run_id}-broker-1-log0", labels, v))


def dead_owner() -> str:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    label = owner_label(child.pid)
    child.wait()
    return label


def test_owner_gone_removes_the_run_and_only_it() -> None:
    docker = FakeDocker("mine")
    docker.add("other")
    said: list[str] = []
    outcome = watch(docker, "mine", dead_owner(), 60, log=said.append, sleep=lambda _s: None)  # type: ignore[arg-type]
    assert outcome == "owner gone"
    assert [r.name for r in docker.containers.items + docker.networks.items] == [
        "kc-other-broker-1",
        "kc-other",
    ]
    assert [r.name for r in docker.volumes.items] == ["kc-other-broker-1-log0"]
    assert said and "kc-mine-broker-1, kc-mine, kc-mine-broker-1-log0" in said[0]


def test_released_run_ends_the_watch_without_removing() -> None:
    docker = FakeDocker("mine")
    clock = [0.0]

    def sleep(seconds: float) -> None:
        clock[0] += seconds
        docker.containers.items.clear()  # the runner's close() removed everything
        docker.networks.items.clear()

    outcome = watch(docker, "mine", owner_label(), 60, sleep=sleep, clock=lambda: clock[0])  # type: ignore[arg-type]
    assert outcome == "released"
    assert docker.containers.lists == 2  # seen once, then gone at the next look


def test_nothing_seen_yet_is_not_released() -> None:
    """Started before the first container: an empty run is only 'released' after it existed."""
    docker = FakeDocker()
    clock = [0.0]

    def sleep(seconds: float) -> None:
        clock[0] += seconds
        if clock[0] > 3 * RESOURCES_EVERY_S:
            raise StopIteration  # enough: it kept watching

    with pytest.raises(StopIteration):
        watch(docker, "mine", owner_label(), 60, sleep=sleep, clock=lambda: clock[0])  # type: ignore[arg-type]
    assert docker.containers.lists >= 3  # looked again and again, found nothing, kept watching


def test_max_lifetime() -> None:
    docker: Any = FakeDocker("mine")
    assert watch(docker, "mine", owner_label(), 0, sleep=lambda _s: None) == "max lifetime"
