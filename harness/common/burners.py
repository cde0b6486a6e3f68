"""CPU burners: K processes that each spin one core, so that `harness calibrate --load K`
measures a bound's figures on a busy machine (a CI runner's neighbours).

Nothing may outlive the harness: each burner ends by itself after `--max-s` seconds, and as
soon as its parent is no longer the process that started it (the harness was SIGKILLed and
the burner re-parented); `cpu_burners` stops them all on the way out, Ctrl-C included.

`python -m harness.common.burners --parent PID --max-s N` is one burner.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Iterator

from harness.common.processes import ManagedProcess, stop_all

STOP_GRACE_S = 2.0
_SPIN = 200_000  # loop turns between two looks at the clock and the parent (~10 ms)


def burner_command(max_s: float, parent: int | None = None) -> list[str]:
    """The command line of one burner owned by `parent` (default: this process)."""
    owner = os.getpid() if parent is None else parent
    return [
        sys.executable,
        "-m",
        "harness.common.burners",
        "--parent",
        str(owner),
        "--max-s",
        repr(float(max_s)),
    ]


def start_burners(count: int, max_s: float) -> list[ManagedProcess]:
    """Start `count` burners, each ending by itself after `max_s` or when this process dies."""
    burners: list[ManagedProcess] = []
    try:
        for _ in range(count):
            burners.append(ManagedProcess(burner_command(max_s)).start())
    except BaseException:
        stop_all(burners, STOP_GRACE_S)
        raise
    return burners


def stop_burners(burners: list[ManagedProcess]) -> None:
    """SIGTERM, then SIGKILL of what is left after the grace; reaped."""
    stop_all(burners, STOP_GRACE_S)


@contextlib.contextmanager
def cpu_burners(count: int, max_s: float) -> Iterator[list[ManagedProcess]]:
    """`count` burners for the block (none when 0), stopped however it ends."""
    burners = start_burners(count, max_s)
    try:
        yield burners
    finally:
        stop_burners(burners)


def burn(parent: int, max_s: float) -> str:
    """Spin until `max_s` has passed or the parent is gone; say which."""
    deadline = time.monotonic() + max_s
    while True:
        for _ in range(_SPIN):
            pass
        if os.getppid() != parent:
            return "parent gone"
        if time.monotonic() >= deadline:
            return "max-s reached"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m harness.common.burners")
    parser.add_argument("--parent", type=int, required=True)
    parser.add_argument("--max-s", type=float, required=True)
    args = parser.parse_args(argv)
    burn(args.parent, args.max_s)


if __name__ == "__main__":
    main()
