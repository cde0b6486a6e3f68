"""Files of a container read and written through Docker's archive API, which works on a
stopped container too: what a fault changes on a broker's disk while the broker is down
(harness.faults.corrupt), as an operator's tool or a failing disk would."""

from __future__ import annotations

import io
import tarfile
from dataclasses import dataclass
from pathlib import PurePosixPath

from docker.errors import NotFound
from docker.models.containers import Container


@dataclass(frozen=True)
class ContainerFile:
    """One regular file: its name in its folder, its tar header (owner, mode), its bytes."""

    name: str
    info: tarfile.TarInfo
    data: bytes


def read_folder(container: Container, path: str) -> dict[str, ContainerFile]:
    """The regular files directly in `path` (none when it does not exist)."""
    try:
        chunks, _stat = container.get_archive(path)
    except NotFound:
        return {}
    out: dict[str, ContainerFile] = {}
    with tarfile.open(fileobj=io.BytesIO(b"".join(chunks)), mode="r") as tar:
        for member in tar:
            parts = PurePosixPath(member.name).parts
            if not member.isfile() or len(parts) != 2:  # <folder>/<file>: not deeper
                continue
            source = tar.extractfile(member)
            if source is not None:
                out[parts[1]] = ContainerFile(parts[1], member, source.read())
    return out


def write_file(container: Container, folder: str, file: ContainerFile, data: bytes) -> None:
    """Replace `file` in `folder` with `data` (shorter or not), keeping its owner and mode."""
    info = replace_info(file.info, file.name, len(data))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.addfile(info, io.BytesIO(data))
    if not container.put_archive(folder, buffer.getvalue()):
        raise OSError(f"{container.name}: could not write {folder}/{file.name}")


def replace_info(info: tarfile.TarInfo, name: str, size: int) -> tarfile.TarInfo:
    new = tarfile.TarInfo(name)
    new.size, new.mode, new.uid, new.gid, new.mtime = (
        size,
        info.mode,
        info.uid,
        info.gid,
        info.mtime,
    )
    return new
