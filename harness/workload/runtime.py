"""What a child process (producer, group member, pipeline member, Spark query) needs besides
its spec sub-model: where the cluster is, what it reads or writes, where its files go.

Crosses the process boundary as one JSON argument (`--runtime`), next to the spec's own
sub-model (`--spec`, its pydantic JSON): nothing is copied field by field (Trogdor's
TaskSpec: immutable, serialisable)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class Runtime:
    bootstrap: str  # the cluster's bootstrap servers, host side
    topic: str  # the workload's topic
    directory: Path  # this child's folder inside the cell (its event and table files)
    max_s: float  # the cell's hard bound: the child stops by itself after this long
    seed: int  # the cell's seed (a child derives its own from it and its name)
    version: str = ""  # the cluster's Kafka version: the Java clients run on its jars

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "directory": str(self.directory)})

    @classmethod
    def from_json(cls, text: str) -> Runtime:
        raw = json.loads(text)
        return cls(
            bootstrap=str(raw["bootstrap"]),
            topic=str(raw["topic"]),
            directory=Path(raw["directory"]),
            max_s=float(raw["max_s"]),
            seed=int(raw["seed"]),
            version=str(raw.get("version", "")),
        )
