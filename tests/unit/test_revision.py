"""`revision`: which code ran and judged a run or a calibration (a real git repo in tmp)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from harness._version import revision


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _clone(root: Path) -> str:
    root.mkdir()
    _git(root, "init", "-q")
    for name in ("harness/a.py", "docs/a.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x = 1\n")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    return _git(root, "rev-parse", "HEAD")


def test_the_commit_and_dirty_only_when_the_code_changed(tmp_path: Path) -> None:
    root = tmp_path / "clone"
    head = _clone(root)
    assert revision(root) == head and len(head) == 40
    (root / "docs/a.md").write_text("changed\n")  # a doc or a record is not the code
    (root / "harness/new.py").write_text("")  # nor an untracked file
    assert revision(root) == head
    (root / "harness/a.py").write_text("x = 2\n")
    assert revision(root) == f"{head}-dirty"


def test_none_outside_a_clone_or_below_its_top(tmp_path: Path) -> None:
    assert revision(tmp_path) is None  # no repository
    root = tmp_path / "clone"
    _clone(root)
    assert revision(root / "harness") is None  # an installed copy inside some other clone
