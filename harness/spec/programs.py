"""Can a command pipeline's program be started here? `(key path, what was expected)` pairs.

A rule of this machine, not of the spec's fields (harness.spec.problems): checked when an
experiment file is loaded to be validated or run, never when `verify` reads a result folder's
spec.yaml back (the program may be gone from the machine that reads it). Without it a
program that does not exist validated, and the run waited out its whole drain.

`command[0]` is started as the launcher starts it (harness.workload.command.member: argv,
no shell, in `cwd`): a name with a '/' is a file relative to `cwd` (or absolute); a bare name
is looked up on the members' PATH only (CommandPipelineSpec.member_path), never in `cwd`.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from harness.spec.consumers import CommandPipelineSpec
from harness.spec.models import Spec

Problem = tuple[str, str]  # (key path, what was expected), as harness.spec.problems


def program_problems(spec: Spec) -> list[Problem]:
    """The spec's command pipeline's program (its `cwd` resolved: harness.spec.load)."""
    p = spec.pipeline
    return command_problems("pipeline", p) if isinstance(p, CommandPipelineSpec) else []


def command_problems(key: str, p: CommandPipelineSpec) -> list[Problem]:
    """Whether `<key>.command[0]` names a program its members can start, in `<key>.cwd`."""
    cwd = Path(p.cwd) if p.cwd is not None else Path.cwd()
    if not cwd.is_dir():
        return [(f"{key}.cwd", f"expected a folder (got {str(cwd)!r}: no such folder)")]
    program = p.command[0]
    where = f"{key}.command[0]"
    if "/" in program:
        file = cwd / program  # an absolute path stays itself
        if not file.is_file():
            return [(where, f"expected a file relative to {key}.cwd {cwd} (got {program!r})")]
        if not os.access(file, os.X_OK):
            return [
                (
                    where,
                    f"expected an executable file (got {program!r}: not executable; chmod +x "
                    f"it, or start it with its interpreter, e.g. [python, {program}])",
                )
            ]
        return []
    path = p.member_path(os.environ.get("PATH", ""), str(Path(sys.executable).parent))
    if shutil.which(program, path=path) is not None:
        return []
    if (cwd / program).is_file():
        return [
            (
                where,
                f"expected ./{program}: a name without '/' is looked up on PATH only "
                f"(got {program!r}, a file in {key}.cwd {cwd})",
            )
        ]
    return [
        (
            where,
            f"expected a program on PATH or a file relative to {key}.cwd {cwd} "
            f"(got {program!r}: neither)",
        )
    ]
