"""Docs coverage, both ways: what the docs must name, and what they name that is gone.

`python scripts/docs_coverage.py [COMMIT]`: every contract name the old README documented is
still documented somewhere in docs/. Issue 26 moved the README's contract text into docs/.
This takes the README as it was before the move (`git show <commit>:README.md`, default the
branch point 7399514), cuts out its contract sections (the experiment file, the command line
with its exit codes, the result folder, where the checks run, the suite file and folder, the
history, the index page, `compare`, the cluster API), collects every name in them (each `code
span`, each word of a code block, each `--option`, each exit code sentence's numbers) and
greps docs/*.md for each.

`python scripts/docs_coverage.py --stale`: every name docs/*.md and README.md give as code
still exists in the tree, so a module moved or renamed cannot leave a page behind: a path
under a top-level folder of the tree (`harness/faults/kind.py`, `experiments/incidents/*.yaml`,
`<placeholders>` matching a part) is a file or folder of the checkout or one `.gitignore`
covers (a build output); a module (`harness.common.waiting.wait_until`) is a module file, and
a name after it is a word of that file; a bare file name (`cell_runner.py`) is some file's name; README's relative links lead to
files. `make test` and `tests/unit/test_docs_coverage.py` run it.

    python scripts/docs_coverage.py [COMMIT]   # prints the counts and every name not found; exit 1 if any
    python scripts/docs_coverage.py --stale    # prints every page's names that are gone; exit 1 if any
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

if str(Path(__file__).resolve().parent) not in sys.path:  # loaded by path: its sibling scripts
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from docs_layout import tracked

ROOT = Path(__file__).resolve().parents[1]
BASE = "7399514"  # the last commit whose README held every contract

# (section heading in the old README, the heading that ends it)
SECTIONS = {
    "spec": ("### The experiment file (a contract)", "### Command line (a contract)"),
    "cli": ("### Command line (a contract)", "### The result folder (a contract)"),
    "result folder": ("### The result folder (a contract)", "A **Spark consumer**"),
    "workload files": ("A **Spark consumer**", "### Checks ("),
    "checks": ("### Checks (", "### Incident catalogue"),
    "suite file": ("### The suite file (a contract)", "### Running a suite"),
    "running a suite": ("### Running a suite", "### The suite folder (a contract)"),
    "suite folder": ("### The suite folder (a contract)", "### Shards:"),
    "shards": ("### Shards:", "**Measured** (2026-11-23"),
    "history": ("### History: what changed since last night (a contract)", "### The index page"),
    "index page": ("### The index page (a contract)", "### compare (a contract)"),
    "compare": ("### compare (a contract)", "## The cluster API"),
    "cluster API": ("## The cluster API", "### Adding a fault kind"),
    "cleanup, errors": ("## Cleanup (no Ryuk)", "## Tests"),
}
# words of code blocks that are YAML/Python syntax or prose, not names
STOP = {"true", "false", "null", "with", "as", "from", "import", "the", "and", "or", "of", "a"}


def names(text: str) -> set[str]:
    found: set[str] = set()
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            line = line.split("#", 1)[0] if not line.lstrip().startswith("results/") else line
            found.update(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*[A-Za-z0-9_]", line))
    text_wo_blocks = re.sub(r"```.*?```", "", text, flags=re.S)
    for span in re.findall(r"`([^`\n]+)`", text_wo_blocks):
        found.add(span.strip())
    found.update(re.findall(r"(?<![\w-])--[a-z][a-z-]+", text))
    return {n for n in found if len(n) > 1 and n.lower() not in STOP}


def exit_codes(text: str) -> set[str]:
    """Each `N <meaning>` of the exit-code sentences, as 'N word word'."""
    out = set()
    for sentence in re.findall(r"\*\*Exit codes\*\*[^\n]*(?:\n(?!\n)[^\n]*)*", text):
        for code, words in re.findall(r"\b(0|1|2|3|130)\b,? ([a-z][a-z]+ [a-z]+)", sentence):
            out.add(f"{code} {words}")
    return out


def main(argv: list[str]) -> int:
    if argv == ["--stale"]:
        gone = stale_names(ROOT)
        for page, name in gone:
            print(f"{page}: `{name}` names nothing in the tree", file=sys.stderr)
        return 1 if gone else 0
    commit = argv[0] if argv else BASE
    old = subprocess.run(
        ["git", "show", f"{commit}:README.md"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    docs = "\n".join(
        p.read_text(encoding="utf-8")
        for p in sorted((ROOT / "docs").glob("*.md"))
        if p.name != "adding-a-fault.md"  # written on another branch
    )
    flat_docs = " ".join(docs.split())
    missing_total = 0
    checked_total = 0
    for section, (begin, end) in SECTIONS.items():
        if begin not in old or end not in old.split(begin, 1)[1]:
            print(f"{section}: section not found in {commit}:README.md", file=sys.stderr)
            return 2
        text = old.split(begin, 1)[1].split(end, 1)[0]
        wanted = names(text)
        codes = exit_codes(text)
        missing = sorted(n for n in wanted if " ".join(n.split()) not in flat_docs)
        missing += sorted(c for c in codes if c not in flat_docs)
        checked_total += len(wanted) + len(codes)
        missing_total += len(missing)
        status = "ok" if not missing else f"{len(missing)} missing: {', '.join(missing)}"
        print(f"{section}: {len(wanted)} names, {len(codes)} exit-code phrases: {status}")
    print(f"total: {checked_total} checked, {missing_total} not found in docs/")
    return 1 if missing_total else 0


# --- the reverse: names the docs give that the tree no longer has ----------------------------
# Names a page gives on purpose although the tree does not have them (page, name): why.
NOT_IN_TREE = {
    ("docs/adding-a-fault.md", "harness/faults/cut_listener.py"): "the page's worked example",
    ("docs/adding-a-fault.md", "tests/unit/test_cut_listener.py"): "the page's worked example",
    ("docs/development.md", "kafka-dump-log.sh"): "Kafka's own tool, in the broker image",
}
MODULE = re.compile(r"(?:python -m )?((?:harness|spark_jobs)(?:\.\w+)+)(?:\(.*\))?")
PATH = re.compile(r"[\w.\-/<>*]+")
FILE_NAME = re.compile(r"[\w\-]+\.(?:py|sh|yml|j2)")  # a result folder's *.yaml are not files here
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _tree(root: Path) -> tuple[set[str], set[str]]:
    """The checkout's files (tracked, or new and not ignored) and every folder above them."""
    files = set(tracked(root))
    folders = {"/".join(f.split("/")[:i]) for f in files for i in range(1, f.count("/") + 1)}
    return files, folders


def _ignored(root: Path, path: str) -> bool:
    """Whether .gitignore covers the path (a build output: jars, the site, a virtualenv)."""
    probe = re.sub(r"<[^>]+>|\*", "x", path)
    return subprocess.run(["git", "check-ignore", "-q", probe], cwd=root).returncode == 0


def _module_has(root: Path, files: set[str], dotted: str) -> bool:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        base = "/".join(parts[:i])
        for candidate in (f"{base}.py", f"{base}/__init__.py"):
            if candidate in files:
                rest = parts[i:]
                source = (root / candidate).read_text(encoding="utf-8")
                return not rest or re.search(rf"\b{re.escape(rest[0])}\b", source) is not None
    return False


def _path_exists(root: Path, files: set[str], folders: set[str], path: str) -> bool:
    path = path.rstrip("/")
    if "<" in path or "*" in path:
        parts = re.split(r"(<[^>]+>|\*)", path)
        rx = "".join("[^/]+" if re.fullmatch(r"<[^>]+>|\*", p) else re.escape(p) for p in parts)
        return any(re.fullmatch(rx, f) for f in files | folders) or _ignored(root, path)
    return path in files or path in folders or _ignored(root, path)


def page_names(text: str) -> list[str]:
    """The inline code spans of a page (code blocks left out: they hold examples)."""
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    return [s.strip() for s in re.findall(r"`([^`\n]+)`", prose)]


def stale_in(root: Path, page: str, text: str, tree: tuple[set[str], set[str]]) -> list[str]:
    """The names `page` gives that name nothing in the tree at `root`."""
    files, folders = tree
    names = {Path(f).name for f in files}
    tops = {f for f in folders if "/" not in f}  # a path under one of them must exist
    gone = []
    for name in page_names(text):
        if (page, name) in NOT_IN_TREE:
            continue
        module = MODULE.fullmatch(name)
        if module:
            ok = _module_has(root, files, module.group(1))
        elif "/" in name and name.split("/", 1)[0] in tops and PATH.fullmatch(name):
            ok = _path_exists(root, files, folders, name)
        elif FILE_NAME.fullmatch(name):
            ok = name in names
        else:
            continue
        if not ok:
            gone.append(name)
    if page == "README.md":
        for target in LINK.findall(text):
            path = target.split("#", 1)[0]
            external = path.startswith(("http:", "https:", "mailto:"))
            if path and not external and not _path_exists(root, files, folders, path):
                gone.append(target)
    return gone


def stale_names(root: Path) -> list[tuple[str, str]]:
    """(page, name) for every name of docs/*.md and README.md that names nothing."""
    tree = _tree(root)
    pages = [*sorted((root / "docs").glob("*.md")), root / "README.md"]
    out = []
    for path in pages:
        page = path.relative_to(root).as_posix()
        out += [(page, n) for n in stale_in(root, page, path.read_text(encoding="utf-8"), tree)]
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
