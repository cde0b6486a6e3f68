"""The one place the version is written: pyproject.toml reads it (setuptools `attr`), and
`harness --version` prints it. `revision` says which commit of a clone runs: a calibration
records it, so that a figure judged by code fixed since can be told apart."""

from __future__ import annotations

import subprocess
from pathlib import Path

__version__ = "0.2.0.dev0"

_ROOT = Path(__file__).resolve().parents[1]
# The code that runs cells and judges them; a change elsewhere (a record, a doc) is no change.
_CODE = ("harness", "spark_jobs")


def revision(root: Path = _ROOT) -> str | None:
    """The commit checked out at `root` (`-dirty` when the code there differs from it), or
    None where `root` is not the top of a git clone (an installed copy) or git is missing."""

    def git(*args: str) -> str:
        done = subprocess.run(
            # --no-optional-locks: a run's `git status` never takes the user's index lock
            ["git", "--no-optional-locks", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=10,
        )
        if done.returncode != 0:
            raise OSError(done.stderr.strip())
        return done.stdout.strip()

    try:
        if Path(git("rev-parse", "--show-toplevel")).resolve() != root.resolve():
            return None
        head = git("rev-parse", "--verify", "HEAD")
        changed = git("status", "--porcelain", "--untracked-files=no", "--", *_CODE)
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}-dirty" if changed else head
