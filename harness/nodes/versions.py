"""The Kafka versions the broker recipe knows, read from docker/ (no Docker needed).

* `docker/versions.txt` — the **defaults**: what `make setup` builds (and `make images`,
  `make java-clients` without VERSIONS). Every reader of that file takes every line that is
  not blank and not a comment, so it stays a plain list.
* `docker/versions-extra.txt` — the versions **built on demand** (`make extra-versions`, or
  `make images java-clients VERSIONS="…"`): the newest patch of other Kafka lines, for the
  weekly suite's `cluster.version: listed`.
"""

from __future__ import annotations

from pathlib import Path

DOCKER = Path(__file__).resolve().parents[2] / "docker"
DEFAULT_VERSIONS_FILE = DOCKER / "versions.txt"
EXTRA_VERSIONS_FILE = DOCKER / "versions-extra.txt"


def read_versions(path: Path) -> list[str]:
    """The versions a file lists (one per line; blank lines and `#` comments skipped), in its
    order; a missing file lists none."""
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def version_key(version: str) -> tuple[int, ...]:
    """Orders X.Y.Z numerically (3.10.0 after 3.9.2); anything else sorts first."""
    try:
        return tuple(int(part) for part in version.split("."))
    except ValueError:
        return ()


def default_versions() -> list[str]:
    """What `make setup` builds (docker/versions.txt)."""
    return read_versions(DEFAULT_VERSIONS_FILE)


def extra_versions() -> list[str]:
    """What is built on demand only (docker/versions-extra.txt)."""
    return read_versions(EXTRA_VERSIONS_FILE)


def listed_versions() -> list[str]:
    """Every version either file lists, once each, oldest first."""
    return sorted(set(default_versions()) | set(extra_versions()), key=version_key)


__all__ = [
    "DEFAULT_VERSIONS_FILE",
    "EXTRA_VERSIONS_FILE",
    "default_versions",
    "extra_versions",
    "listed_versions",
    "read_versions",
    "version_key",
]
