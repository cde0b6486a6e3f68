"""A container whose FUSE daemon is frozen (plfs mid-cut when its runner died) cannot be
removed: the kernel holds the dying JVM in its last writes to the mount, waiting on the
daemon, and Docker's kill never completes. Aborting the container's FUSE connections
(fusectl, as root) fails those writes and frees the processes; the removal then succeeds.
Only the connections mounted inside that container are touched, found through the mount
tables of its processes (a host's other FUSE mounts, sshfs and the like, are not)."""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

FUSECTL = Path("/sys/fs/fuse/connections")
PROC = Path("/proc")


def fuse_devices(mountinfo: str) -> list[int]:
    """The FUSE mounts' device minors in a /proc/<pid>/mountinfo text: fusectl names each
    connection by it (`0:52` -> /sys/fs/fuse/connections/52)."""
    found: set[int] = set()
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 3 or not tail:
            continue
        if tail[0] != "fuse" and not tail[0].startswith(("fuse.", "fuseblk")):
            continue
        major, _, minor = fields[2].partition(":")
        if major == "0" and minor.isdigit():
            found.add(int(minor))
    return sorted(found)


def container_pids(container_id: str, proc: Path = PROC) -> list[int]:
    """The host pids of the container's processes (their cgroup names its id)."""
    pids = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if container_id in (entry / "cgroup").read_text():
                pids.append(int(entry.name))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return sorted(pids)


def abort_fuse(container_id: str, proc: Path = PROC, fusectl: Path = FUSECTL) -> list[int]:
    """Abort every FUSE connection mounted in the container; the connections aborted (none
    when it has no FUSE mount, or this process may not write fusectl)."""
    devices: set[int] = set()
    for pid in container_pids(container_id, proc):
        with contextlib.suppress(OSError):
            devices.update(fuse_devices((proc / str(pid) / "mountinfo").read_text()))
    if not devices:
        return []
    if fusectl == FUSECTL and not any(fusectl.glob("*/abort")):
        subprocess.run(
            ["mount", "-t", "fusectl", "none", str(fusectl)], capture_output=True, check=False
        )
    aborted = []
    for device in sorted(devices):
        with contextlib.suppress(OSError):
            (fusectl / str(device) / "abort").write_text("1")
            aborted.append(device)
    return aborted
