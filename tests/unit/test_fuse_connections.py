"""Aborting a container's frozen FUSE connections, on hand-built /proc and fusectl trees:
only the mounts inside that container's processes' mount tables are aborted."""

from __future__ import annotations

from pathlib import Path

from harness.nodes.fuse_connections import abort_fuse, container_pids, fuse_devices

MOUNTINFO = """\
22 1 0:21 / /sys rw,nosuid - sysfs sysfs rw
35 22 0:31 / /sys/fs/fuse/connections rw - fusectl fusectl rw
412 400 0:52 / /var/lib/kafka-chaos/data rw,nosuid,nodev - fuse.plfs plfs rw,user_id=0
413 400 0:53 / /mnt/other rw - fuse /dev/fuse rw
414 400 8:1 /var/lib/docker /data rw - ext4 /dev/sda1 rw
"""
OTHER = "500 1 0:77 / /home/u/remote rw - fuse.sshfs host:/ rw\n"


def _proc(tmp_path: Path) -> Path:
    proc = tmp_path / "proc"
    for pid, cgroup, mounts in (
        (101, "0::/system.slice/docker-abc123.scope\n", MOUNTINFO),
        (102, "0::/system.slice/docker-abc123.scope\n", MOUNTINFO),
        (200, "0::/user.slice/session-1.scope\n", OTHER),  # the host's own sshfs
    ):
        (proc / str(pid)).mkdir(parents=True)
        (proc / str(pid) / "cgroup").write_text(cgroup)
        (proc / str(pid) / "mountinfo").write_text(mounts)
    (proc / "self").mkdir()
    return proc


def test_the_fuse_mounts_of_a_mount_table_are_named_by_their_device_minor() -> None:
    assert fuse_devices(MOUNTINFO) == [52, 53]  # not fusectl, sysfs or ext4
    assert fuse_devices("garbage\n\n") == []


def test_only_the_containers_connections_are_aborted(tmp_path: Path) -> None:
    proc = _proc(tmp_path)
    fusectl = tmp_path / "connections"
    for device in (52, 53, 77):
        (fusectl / str(device)).mkdir(parents=True)
        (fusectl / str(device) / "abort").write_text("")
    assert container_pids("abc123", proc) == [101, 102]
    assert abort_fuse("abc123", proc, fusectl) == [52, 53]
    assert (fusectl / "52" / "abort").read_text() == "1"
    assert (fusectl / "77" / "abort").read_text() == ""  # the host's sshfs is left alone


def test_a_container_without_fuse_aborts_nothing(tmp_path: Path) -> None:
    proc = _proc(tmp_path)
    assert abort_fuse("def456", proc, tmp_path / "connections") == []
