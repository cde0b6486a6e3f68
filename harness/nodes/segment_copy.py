"""Copy a broker's partition directories out of its container (or its disks' keeper).

Docker's archive API (what `docker cp` uses) reads a running, paused or stopped container
alike. The stream is a tar of the whole directory; only the segment files (`*.log`) and the
leader-epoch checkpoint are written out: a segment's index files are preallocated (10 MiB
of zeros each) and DumpLogSegments does not need them.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from docker.errors import NotFound
from docker.models.containers import Container

KEPT_FILES = ("leader-epoch-checkpoint", "partition.metadata")


class _Chunks(io.RawIOBase):
    """A readable file over the chunks of Docker's archive stream."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._rest = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while not self._rest:
            try:
                self._rest = next(self._chunks)
            except StopIteration:
                return 0
        n = min(len(buffer), len(self._rest))
        buffer[:n] = self._rest[:n]
        self._rest = self._rest[n:]
        return n


def copy_partition_dir(container: Container, path: str, dest: Path) -> int | None:
    """The segment files of one partition directory into `dest`; their bytes, or None if
    the container has no such directory."""
    try:
        chunks, _stat = container.get_archive(path)
    except NotFound:
        return None
    dest.mkdir(parents=True, exist_ok=True)
    copied = 0
    stream = io.BufferedReader(_Chunks(iter(chunks)), buffer_size=1 << 20)
    with tarfile.open(fileobj=stream, mode="r|") as tar:
        for member in tar:
            name = PurePosixPath(member.name).name
            if not member.isfile() or not (name.endswith(".log") or name in KEPT_FILES):
                continue
            source = tar.extractfile(member)
            if source is None:
                continue
            with (dest / name).open("wb") as out:
                while block := source.read(1 << 20):
                    out.write(block)
            copied += member.size if name.endswith(".log") else 0
    return copied


def copy_topic(
    sources: list[tuple[Container, str]], topic: str, at_least: int, dest: Path
) -> tuple[list[int], int]:
    """Every partition directory `<topic>-<p>` found in these (container, log dir) sources
    into dest/<topic>-<p>: partitions 0.. at_least-1, then on while one more is found (a
    topic grown by add-partitions). (partitions found, bytes copied)."""
    found: list[int] = []
    total = 0
    p = 0
    while True:
        here = False
        for container, log_dir in sources:
            name = f"{topic}-{p}"
            size = copy_partition_dir(container, f"{log_dir}/{name}", dest / name)
            if size is not None:
                here = True
                total += size
        if here:
            found.append(p)
        elif p >= at_least:
            return found, total
        p += 1
