"""The suite file: which experiment files run, and the axes added to every experiment's matrix.

```yaml
suite: nightly                       # required; [A-Za-z0-9._-]+ (this key makes it a suite file)
description: "…"
seed: 7                              # optional: for experiments that name no seed
root: ../..                          # the folder globs are relative to, from this file (default .)
experiments:                         # globs, in order; each glob's files sorted; a file once
  - experiments/*.yaml
  - experiments/incidents/*.yaml
skip: [experiments/incidents/slow-*.yaml]   # globs of files left out (optional)
axes:                                # matrix keys, as in an experiment's `matrix:`
  cluster.version: [3.9.2, 4.3.1]
```
"""

from __future__ import annotations

import glob
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, StringConstraints, ValidationError

from harness.common.spec_base import MAX_SEED, StrictModel
from harness.spec import SpecError
from harness.spec.load import read_yaml, validation_problems
from harness.spec.paths import Segment, resolve_path

Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._-]+$")]
Glob = Annotated[str, StringConstraints(min_length=1)]
SUITE_KEY = "suite"  # a YAML file whose top level has this key is a suite, not an experiment
_RESERVED_AXES = ("expect", "exclude")  # matrix keys that are not axes


class SuiteFile(StrictModel):
    suite: Name
    description: str = ""
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED)  # as an experiment's seed
    root: str = "."
    experiments: list[Glob] = Field(min_length=1)
    skip: list[Glob] = Field(default_factory=list)
    axes: dict[str, list[Any]] = Field(default_factory=dict)


@dataclass(frozen=True)
class SuiteAxis:
    key: str  # as written in the suite file
    segments: tuple[Segment, ...]
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Suite:
    """A suite file, checked: its experiment files found and its axes resolved."""

    path: Path
    model: SuiteFile
    root: Path
    files: list[Path]  # experiment files, in the order they run
    axes: list[SuiteAxis]

    @property
    def name(self) -> str:
        return self.model.suite

    def shown(self, path: Path) -> str:
        """A file as the plan and the summaries name it: relative to the suite's root."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)


def is_suite_file(path: Path) -> bool:
    """True when the file reads as YAML with a top-level `suite:` key (unreadable: False)."""
    try:
        data = read_yaml(path)
    except SpecError:
        return False
    return isinstance(data, dict) and SUITE_KEY in data


def load_suite(path: Path | str) -> Suite:
    """The suite, or SpecError with one line per problem, each `file: key: expected …`."""
    path = Path(path)
    data = read_yaml(path)
    source = str(path)
    if not isinstance(data, dict):
        got = "an empty file" if data is None else type(data).__name__
        raise SpecError([f"{source}: expected a mapping of suite keys (got {got})"])
    try:
        model = SuiteFile.model_validate(data)
    except ValidationError as exc:
        lines = []
        for error, (key, message) in zip(exc.errors(), validation_problems(exc), strict=True):
            if error["type"] == "extra_forbidden" and len(error["loc"]) == 1:
                message = f"unknown key; allowed: {', '.join(SuiteFile.model_fields)}"
            lines.append(f"{source}: {key}: {message}")
        raise SpecError(lines) from None
    root = (path.parent / model.root).resolve()
    problems: list[str] = []
    if not root.is_dir():
        problems.append(f"{source}: root: {model.root!r} is not a folder (from {path.parent})")
        raise SpecError(problems)
    axes = _axes(model, source, problems)
    files = _files(model, root, path, problems)
    if problems:
        raise SpecError(problems)
    return Suite(path, model, root, files, axes)


def _axes(model: SuiteFile, source: str, problems: list[str]) -> list[SuiteAxis]:
    axes = []
    for key, values in model.axes.items():
        where = f"{source}: axes.{key}"
        if key in _RESERVED_AXES:
            problems.append(f"{where}: not an axis (a suite adds axes only)")
            continue
        try:
            segments = resolve_path(key)
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
            continue
        if not values:
            problems.append(f"{where}: expected a non-empty list of values")
            continue
        axes.append(SuiteAxis(key, segments, tuple(values)))
    return axes


def _matches(root: Path, pattern: str) -> list[Path]:
    full = pattern if Path(pattern).is_absolute() else str(root / pattern)
    return sorted(Path(p).resolve() for p in glob.glob(full) if Path(p).is_file())


def _files(model: SuiteFile, root: Path, path: Path, problems: list[str]) -> list[Path]:
    """The experiment files, in order; the suite file itself is never one of them."""
    source = str(path)
    skipped: set[Path] = {path.resolve()}
    for i, pattern in enumerate(model.skip):
        found = _matches(root, pattern)
        if not found:
            problems.append(f"{source}: skip[{i}]: {pattern!r} matches no file (under {root})")
        skipped.update(found)
    files: list[Path] = []
    for i, pattern in enumerate(model.experiments):
        found = _matches(root, pattern)
        if not found:
            problems.append(
                f"{source}: experiments[{i}]: {pattern!r} matches no file (under {root})"
            )
        for file in found:
            if file in skipped or file in files:
                continue
            if is_suite_file(file):
                problems.append(
                    f"{source}: experiments[{i}]: {file} is a suite file, not an experiment"
                )
                continue
            files.append(file)
    if not files and not problems:
        problems.append(f"{source}: experiments: every file found is skipped")
    return files
