"""A client process under libfaketime (Debian's faketime): the environment that skews its
wall clock on demand.

The process reads its offset from a file (`+0`, `+3600`, `-7200`) at most once a second;
a clock-skew fault (harness.faults.clock) rewrites the file. The monotonic clock is left
alone, so timeouts and the harness's own bookkeeping are not moved; the process gets its
true start time too (harness.results.history.TRUE_CLOCK_ENV), so its ledger and events
keep true time while what the Kafka client stamps (CreateTime) is skewed.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

from harness.errors import ConfigError
from harness.results.history import TRUE_CLOCK_ENV, true_clock_anchor

LIBRARY_GLOB = "/usr/lib/*/faketime/libfaketime.so.1"
CACHE_DURATION_S = 1  # re-read the offset file at most once a second (docs/benchmarks.md)


def offset_text(offset_s: float) -> str:
    """libfaketime's relative offset: `+3600`, `-7200`, `+1.500`; never a bare `0` (which
    it would parse as an absolute date and fail on)."""
    if float(offset_s).is_integer():
        return f"{int(offset_s):+d}"
    return f"{offset_s:+.3f}"


def write_offset(path: Path, offset_s: float) -> None:
    """Replace the file in one rename: a reader sees the old offset or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(offset_text(offset_s) + "\n", encoding="utf-8")
    tmp.replace(path)


def library() -> str:
    """libfaketime on this machine (Debian's faketime package)."""
    found = sorted(glob.glob(LIBRARY_GLOB))
    if not found:
        raise ConfigError(
            "clock-skew on a client needs libfaketime (Debian package faketime; "
            "'make setup' installs it)"
        )
    return found[0]


def environment(offset_file: Path) -> dict[str, str]:
    """The environment of a process started now whose clock follows `offset_file` (created
    with `+0` if missing; an existing one is kept: a restarted process stays skewed)."""
    if not offset_file.exists():
        write_offset(offset_file, 0)
    preload = " ".join(p for p in (library(), os.environ.get("LD_PRELOAD", "")) if p)
    return {
        **os.environ,
        "LD_PRELOAD": preload,
        "FAKETIME_TIMESTAMP_FILE": str(offset_file),
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
        # Timed waits on monotonic condition variables keep their deadline (libfaketime's
        # forced "fix" makes them return at once and spin; docker/clock-entrypoint.sh).
        "FAKETIME_FORCE_MONOTONIC_FIX": "0",
        "FAKETIME_CACHE_DURATION": str(CACHE_DURATION_S),
        TRUE_CLOCK_ENV: true_clock_anchor(),
    }
