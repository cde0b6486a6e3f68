"""A program `make setup` builds into the virtualenv's bin (Toxiproxy's server, plfs), found
where the harness runs, or a ConfigError naming the make target that builds it."""

from __future__ import annotations

import sys
from pathlib import Path

from harness.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def built_binary(name: str, needed_by: str, make_target: str) -> Path:
    """`name` in this interpreter's bin, else in the checkout's .venv/bin."""
    for folder in (Path(sys.prefix) / "bin", ROOT / ".venv" / "bin"):
        if (folder / name).is_file():
            return folder / name
    raise ConfigError(
        f"no {name} in {Path(sys.prefix) / 'bin'}: {needed_by} need(s) it; run "
        f"'make {make_target}' (part of 'make setup')"
    )
