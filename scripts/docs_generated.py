"""Every part of the docs generated from the code, written or checked in one place.

Each generated block sits in its page between `<!-- generated:NAME:begin -->` and
`<!-- generated:NAME:end -->`; this script renders it from the code and writes it there (the
page around it is hand-written). The incident catalogue (scripts/docs_incidents.py) is one
more generated file. Committed pages are what GitHub shows and what a review diffs, so they
are written, not rendered at build time: `make docs` writes them, `make test` runs `--check`
and `tests/unit/test_docs_generated.py` fails on a stale page, naming the block.

    python scripts/docs_generated.py           # rewrite every generated block and page
    python scripts/docs_generated.py --check   # exit 1 naming the stale pages and blocks
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, Path(__file__).resolve().parent):  # the harness, and the other scripts
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import docs_calibration  # noqa: E402
import docs_capabilities  # noqa: E402
import docs_faults  # noqa: E402
import docs_incidents  # noqa: E402
import docs_layout  # noqa: E402

from harness.report import bug_table  # noqa: E402

Render = Callable[[Path], str]

# page -> block name -> how it is rendered from the code at a checkout's root
BLOCKS: dict[Path, dict[str, Render]] = {
    Path("docs/adding-a-fault.md"): {
        "fault-flags": lambda root: docs_faults.flag_table(),
        "fault-registry": lambda root: docs_faults.registry_snippet(),
        "fault-typo": lambda root: docs_faults.misspelt_kind_error(),
        "fault-kinds": docs_faults.kind_table,
        "capabilities": lambda root: docs_capabilities.capability_table(),
    },
    Path("docs/exploring.md"): {
        "explore-drawings": docs_faults.drawing_table,
    },
    Path("docs/bugs.md"): {
        "bugs": lambda root: bug_table.markdown(bug_table.bug_entries(root)),
    },
    Path("docs/experiments.md"): {
        "calibrated-bounds": docs_calibration.calibration_table,
        "calibration-debt": docs_calibration.debt_table,
    },
    Path("docs/development.md"): {
        "make-targets": docs_layout.make_targets,
        "import-contracts": docs_layout.import_contracts,
        "layout": lambda root: docs_layout.layout(
            root, docs_layout.tracked(root), docs_layout.cli_commands()
        ),
    },
}


def markers(name: str) -> tuple[str, str]:
    return f"<!-- generated:{name}:begin -->", f"<!-- generated:{name}:end -->"


def split(text: str, name: str, where: Path) -> tuple[str, str, str]:
    """(before the block, the block, after it); ValueError naming the page without markers."""
    begin, end = markers(name)
    if text.count(begin) != 1 or text.count(end) != 1:
        raise ValueError(f"{where}: needs one {begin} and one {end}")
    head, rest = text.split(begin, 1)
    body, tail = rest.split(end, 1)
    return head, body, tail


def fill(text: str, name: str, body: str, where: Path) -> str:
    """`text` with block `name` holding `body` (a line of its own before and after)."""
    head, _, tail = split(text, name, where)
    begin, end = markers(name)
    return f"{head}{begin}\n{body}{end}{tail}"


def rendered(root: Path) -> dict[Path, dict[str, str]]:
    """Every block's text, rendered from the code at `root`."""
    return {page: {n: r(root) for n, r in blocks.items()} for page, blocks in BLOCKS.items()}


def stale_blocks(text: str, bodies: dict[str, str], where: Path) -> list[str]:
    """The blocks of a page whose text differs from what is rendered."""
    return [n for n, body in bodies.items() if split(text, n, where)[1] != f"\n{body}"]


def expected(root: Path) -> dict[Path, str]:
    """Every generated file and the text it must hold."""
    out = docs_incidents.expected(root)
    for page, bodies in rendered(root).items():
        text = (root / page).read_text(encoding="utf-8")
        for name, body in bodies.items():
            text = fill(text, name, body, page)
        out[page] = text
    return out


def stale(root: Path) -> list[str]:
    """What is stale, one line each: a page, with its stale blocks when it has markers."""
    out = []
    bodies = rendered(root)
    for rel, text in expected(root).items():
        committed = (root / rel).read_text(encoding="utf-8") if (root / rel).is_file() else ""
        if committed == text:
            continue
        names = stale_blocks(committed, bodies[rel], rel) if rel in bodies else []
        out.append(f"{rel}" + (f" (blocks: {', '.join(names)})" if names else ""))
    return out


def main(argv: list[str]) -> int:
    try:
        return _main(argv)
    except ValueError as exc:  # a page without its markers, a stale calibration record
        print(f"docs_generated: {exc}", file=sys.stderr)
        return 1


def _main(argv: list[str]) -> int:
    if argv == ["--check"]:
        old = stale(ROOT)
        for line in old:
            print(f"stale: {line}: run python scripts/docs_generated.py", file=sys.stderr)
        return 1 if old else 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    for rel, text in expected(ROOT).items():
        path = ROOT / rel
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
