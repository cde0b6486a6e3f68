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
  cluster.version: [3.9.2, 4.3.1]    # or `listed`: every version docker/ lists (below)
replace: [cluster.version]           # axes that replace an experiment's own axis (optional)
```

`cluster.version: listed` is every version of docker/versions.txt (what make setup builds)
and docker/versions-extra.txt (built on demand), oldest first: read from the files, so the
plan is the same on every machine, whatever images it has (the shards of one run agree on
it); `run` refuses to start when one of them is not built (harness.suite.builds).
"""

from __future__ import annotations

import glob
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, StringConstraints, ValidationError

from harness.common.spec_base import MAX_SEED, StrictModel
from harness.nodes.versions import DEFAULT_VERSIONS_FILE, EXTRA_VERSIONS_FILE, listed_versions
from harness.spec import SpecError
from harness.spec.load import read_yaml, validation_problems
from harness.spec.paths import Segment, resolve_path

Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._-]+$")]
Glob = Annotated[str, StringConstraints(min_length=1)]
SUITE_KEY = "suite"  # a YAML file whose top level has this key is a suite, not an experiment
_RESERVED_AXES = ("expect", "exclude")  # matrix keys that are not axes
LISTED = "listed"  # `cluster.version: listed`: every version docker/ lists
_VERSION_KEY = ("cluster", "version")


class SuiteFile(StrictModel):
    suite: Name
    description: str = ""
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED)  # as an experiment's seed
    root: str = "."
    experiments: list[Glob] = Field(min_length=1)
    skip: list[Glob] = Field(default_factory=list)
    axes: dict[str, list[Any] | str] = Field(default_factory=dict)  # a list, or LISTED
    replace: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class SuiteAxis:
    key: str  # as written in the suite file
    segments: tuple[Segment, ...]
    values: tuple[Any, ...]
    replace: bool = False  # replaces an experiment's own axis of this key (suite `replace:`)
    listed: bool = False  # the values are `listed`: read from docker/'s version files


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
    for i, key in enumerate(model.replace):
        if key not in model.axes:
            named = ", ".join(model.axes) or "none"
            problems.append(f"{source}: replace[{i}]: {key!r} is not one of the axes ({named})")
    for key, given in model.axes.items():
        where = f"{source}: axes.{key}"
        if key in _RESERVED_AXES:
            problems.append(f"{where}: not an axis (a suite adds axes only)")
            continue
        try:
            segments = resolve_path(key)
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
            continue
        if isinstance(given, str) and given != LISTED:
            problems.append(
                f"{where}: expected a list of values, or {LISTED!r} (cluster.version only), "
                f"not {given!r}"
            )
            continue
        values = _listed(where, segments, problems) if isinstance(given, str) else given
        if values is None:
            continue
        if not values:
            problems.append(f"{where}: expected a non-empty list of values")
            continue
        replace = key in model.replace
        axes.append(SuiteAxis(key, segments, tuple(values), replace, isinstance(given, str)))
    return axes


def _listed(where: str, segments: tuple[Segment, ...], problems: list[str]) -> list[str] | None:
    """`listed`: the versions of docker/versions.txt and docker/versions-extra.txt."""
    if segments != _VERSION_KEY:
        problems.append(f"{where}: {LISTED!r} is for cluster.version only; expected a list")
        return None
    versions = listed_versions()
    if not versions:
        problems.append(
            f"{where}: {LISTED!r} found no version in {DEFAULT_VERSIONS_FILE} or "
            f"{EXTRA_VERSIONS_FILE}"
        )
        return None
    return versions


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
