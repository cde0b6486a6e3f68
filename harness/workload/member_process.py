"""What every consumer member process shares: its command line and its way of stopping.

A member gets three arguments, whatever its kind: `--spec`, its set's spec sub-model as
pydantic JSON (harness.spec.consumers), `--runtime`, the cell's Runtime as JSON (where the
cluster is, the topic, the consumers folder, the lifetime bound, the seed), and
`--consumer`, its own name (`<set>/<member>`). Nothing is copied field by field: the spec's
own model crosses the process boundary (Trogdor's TaskSpec). Imported by the member
processes: pydantic and the standard library only (import-linter "light-processes").
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from pydantic import BaseModel

from harness.workload.runtime import Runtime

S = TypeVar("S", bound=BaseModel)


def member_name(set_name: str, index: int) -> str:
    """Member `index` of a group-like set: `group/m0`."""
    return f"{set_name}/m{index}"


def member_index(name: str) -> int:
    """The index `member_name` gave: `pipeline/m1` -> 1."""
    return int(name.rpartition("/m")[2])


def simulated_work(rng: random.Random, processing_ms: int, jitter_ms: int) -> None:
    """A batch's work: `processing_ms` of sleep plus a uniform 0..jitter_ms drawn from the
    member's seeded generator (same seed, same work times); SIGTERM does not cut it short."""
    ms = processing_ms + (rng.randint(0, jitter_ms) if jitter_ms > 0 else 0)
    if ms > 0:
        time.sleep(ms / 1000)


def member_command(module: str, spec: BaseModel, runtime: Runtime, name: str) -> list[str]:
    """`python -m <module> --spec … --runtime … --consumer <name>`."""
    return [
        sys.executable,
        "-m",
        module,
        "--spec",
        spec.model_dump_json(),
        "--runtime",
        runtime.to_json(),
        "--consumer",
        name,
    ]


@dataclass(frozen=True)
class MemberArgs(Generic[S]):
    spec: S
    runtime: Runtime
    name: str


def parse_member_args(model: type[S], argv: list[str], description: str | None) -> MemberArgs[S]:
    """The three arguments of `member_command`, the spec checked against its model again."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--spec", required=True, help=f"the set's {model.__name__} as JSON")
    parser.add_argument("--runtime", required=True, help="the cell's Runtime as JSON")
    parser.add_argument("--consumer", required=True, help="<set>/<member>")
    args = parser.parse_args(argv)
    return MemberArgs(
        model.model_validate_json(args.spec), Runtime.from_json(args.runtime), args.consumer
    )


class Stoppable(Protocol):
    stopping: bool


ORPHAN_GRACE_S = 10.0  # for a member's own loop to see its runner gone and end cleanly


def run_until_signalled(process: Stoppable, run: Callable[[], int | None]) -> int | None:
    """`run()` with SIGTERM and SIGINT setting `process.stopping` (it ends cleanly after what
    it has in hand), and ended for good when the runner that started it is gone."""

    def stop(signum: int, frame: object) -> None:
        process.stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    exit_with_parent(os.getppid())
    return run()


def exit_with_parent(parent: int, grace_s: float = ORPHAN_GRACE_S) -> None:
    """End this member `grace_s` after its runner is gone, even while the main thread is
    blocked in a client call its loop's own check never returns from: a librdkafka
    consumer's close() waits for a coordinator the runner's cleanup has removed (seen: a
    group member left running for minutes after `harness explore` was SIGKILLed). A member
    leads its own process group (harness.common.processes), so the group goes with it
    (Spark's JVM); one that does not ends alone."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        time.sleep(grace_s)
        if os.getpgrp() == os.getpid():
            os.killpg(os.getpid(), signal.SIGKILL)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
