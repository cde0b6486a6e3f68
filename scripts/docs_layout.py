"""docs/development.md's generated parts: the make targets from the Makefile's `## ` comments
(what `make help` prints), the import contracts from pyproject.toml, and the layout from the
tree: every package and module of harness/ and spark_jobs/ with the first sentence of its
docstring, every other folder with its files, the CLI's commands from its typer app.

A module's docstring is where it says what it is, once; the page repeats it, so a module added,
moved or renamed changes the page (`scripts/docs_generated.py` writes it, a unit test fails
on a stale page). The other folders' one-line descriptions are below (`FOLDERS`): a folder
missing there, or described but gone, is an error naming it.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10 (pyproject.toml's floor): the same parser, before it joined the library
    import tomli as tomllib

PACKAGES = ("harness", "spark_jobs")  # described module by module
# Every other top-level folder, in the order the page lists them.
FOLDERS = {
    "experiments": "the shipped experiment files and suites ([Shipped experiments](experiments.md))",
    "examples": "a user's own tests and programs under the harness ([Your own pipeline](your-pipeline.md))",
    "docker": "the broker images' recipe, built with no registry (`make images`)",
    "java_clients": "the Java clients (Maven): the ledger producer, group member, commit reporter",
    "tests": "unit/ (no Docker), integration/ (real clusters), experiments/ (the CLI end to end)",
    "benchmarks": "what the harness and its parts cost ([Benchmarks](benchmarks.md)); results/ holds the last tables",
    "scripts": "what `make` runs besides Python's tools: setup steps and the docs' generators",
    "tools": "programs of the project's own in other languages: plfs/, the power-loss FUSE file system (Go)",
    "docs": "this site (mkdocs.yml)",
    ".github": "the GitHub workflows (CI, nightly, weekly)",
    ".ci": "what CI runs (the workflows call it)",
}
SENTENCE_END = re.compile(r"(?<!e\.g)(?<!i\.e)(?<!etc)(?<!vs)\.\s+(?=[A-Z`(\[])")


def tracked(root: Path) -> list[str]:
    """The repository's files (tracked, or new and not ignored) that exist, as posix paths."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return sorted({p for p in out if (root / p).is_file()})


def first_sentence(text: str) -> str:
    """The first sentence of the first paragraph, on one line."""
    paragraph = " ".join(text.strip().split("\n\n", 1)[0].split())
    return SENTENCE_END.split(paragraph, 1)[0].rstrip(".") + "."


def describe(path: Path) -> str:
    """A file's own words: a module's docstring, else the comment block at its top."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:  # not text: nothing to say
        return ""
    if path.suffix == ".md":  # a page: its title
        return text.split("\n", 1)[0].lstrip("#").strip() if text.startswith("# ") else ""
    if path.suffix == ".py":
        doc = ast.get_docstring(ast.parse(text))
        return first_sentence(doc) if doc else ""
    lines = [ln for ln in text.splitlines() if not ln.startswith("#!")]
    block: list[str] = []
    for line in lines:
        if not line.startswith("#"):
            break
        block.append(line.lstrip("#").strip())
    return first_sentence("\n".join(block)) if block else ""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _package_rows(root: Path, files: list[str], top: str) -> list[tuple[str, str]]:
    """(path under top, description) of every package, module and other file under `top`,
    each package followed by its modules, then its subfolders."""
    under = [f[len(top) + 1 :] for f in files if f.startswith(top + "/")]
    rows: list[tuple[str, str]] = []

    def walk(folder: str) -> None:
        prefix = f"{folder}/" if folder else ""
        here = sorted(f for f in under if f.startswith(prefix) and "/" not in f[len(prefix) :])
        subs = sorted(
            {f[len(prefix) :].split("/", 1)[0] for f in under if f.startswith(prefix)}
            - {f[len(prefix) :] for f in here}
        )
        init = f"{prefix}__init__.py"
        if folder:
            if init in here:
                rows.append((f"**`{folder}/`**", describe(root / top / init)))
            else:
                names = ", ".join(f"`{f[len(prefix) :]}`" for f in here)
                rows.append((f"`{folder}/`", f"(not a package) {names}"))
                return
        for f in here:
            if f.endswith(".py") and f != init:
                rows.append((f"`{f}`", describe(root / top / f)))
            elif not f.endswith(".py") and f != init:
                rows.append((f"`{f}`", ""))
        for sub in subs:
            walk(prefix + sub)

    walk("")
    return rows


def cli_commands() -> list[str]:
    """The command line's verbs, from its typer app (whichever module holds them)."""
    import typer.main

    from harness.cli import app

    group = typer.main.get_command(app)
    return sorted(getattr(group, "commands", {}))


def import_contracts(root: Path) -> str:
    """pyproject.toml's import-linter contracts: the layers, top to bottom (`a | b` > `c` > ...),
    then every other contract by its name."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    layers = [c for c in contracts if c.get("type") == "layers"]
    if len(layers) != 1:
        raise ValueError("pyproject.toml: expected one import-linter layers contract")
    lines = [
        "Layers, higher may import lower (`|`: siblings that must not import each other): "
        + " > ".join(f"`{layer}`" for layer in layers[0]["layers"])
        + ". Besides:",
        "",
    ]
    lines += [f"* {c['name']} (`{c['id']}`)" for c in contracts if c.get("type") != "layers"]
    return "\n".join(lines) + "\n"


MAKE_TARGET = re.compile(r"^([A-Za-z_-]+):.*## (.*)$", flags=re.M)


def make_targets(root: Path) -> str:
    """The Makefile's documented targets, in its order, with their `## ` comments."""
    rows = MAKE_TARGET.findall((root / "Makefile").read_text(encoding="utf-8"))
    if not rows:
        raise ValueError("Makefile: no target with a `## ` comment")
    lines = ["| target | does |", "|---|---|"]
    for target, what in rows:  # as markdown: no tag, no emphasis, no cell break
        text = what.replace("<", "&lt;").replace("*", "\\*").replace("|", "\\|")
        lines.append(f"| `{target}` | {text} |")
    return "\n".join(lines) + "\n"


def _folder_rows(root: Path, files: list[str], folder: str) -> list[tuple[str, str]]:
    """A folder's direct files (described by their header where they have one) and
    subfolders (with how many files they hold)."""
    under = [f[len(folder) + 1 :] for f in files if f.startswith(folder + "/")]
    names = sorted({f.split("/", 1)[0] for f in under})
    if len(names) == 1 and all("/" in f for f in under):  # only a subfolder: list it instead
        return _folder_rows(root, files, f"{folder}/{names[0]}")
    rows = []
    for name in names:
        if any(f.startswith(name + "/") for f in under):
            rows.append((f"`{folder}/{name}/`", ""))
        else:
            rows.append((f"`{folder}/{name}`", describe(root / folder / name)))
    return rows


def _table(rows: Iterable[tuple[str, str]]) -> list[str]:
    return ["| path | what it is |", "|---|---|", *(f"| {p} | {_cell(d)} |" for p, d in rows)]


def layout(root: Path, files: list[str], commands: list[str]) -> str:
    """The generated part of the page: a table per package, then the other folders."""
    folders = sorted({f.split("/", 1)[0] for f in files if "/" in f} - set(PACKAGES))
    unknown = [f for f in folders if f not in FOLDERS]
    gone = [f for f in FOLDERS if f not in folders]
    if unknown or gone:
        raise ValueError(
            "scripts/docs_layout.py FOLDERS: "
            + "; ".join(
                [
                    *(f"{f}/ has no description" for f in unknown),
                    *(f"{f}/ is described but not in the tree" for f in gone),
                ]
            )
        )
    out: list[str] = []
    for top in PACKAGES:
        init = root / top / "__init__.py"
        out += [f"### `{top}/`", "", describe(init), ""]
        rows = _package_rows(root, files, top)
        if commands:
            rows = [
                (p, f"{d} Commands: {', '.join(commands)}.")
                if p in ("`cli.py`", "**`cli/`**")
                else (p, d)
                for p, d in rows
            ]
        out += [*_table(rows), ""]
    out += ["### Other folders", ""]
    rows = []
    for folder in FOLDERS:
        rows.append((f"**`{folder}/`**", FOLDERS[folder]))
        rows += _folder_rows(root, files, folder)
    out += _table(rows)
    return "\n".join(out) + "\n"
