"""Every contract name the old README documented is still documented somewhere in docs/.

Issue 26 moved the README's contract text into docs/. This script takes the README as it was
before the move (`git show <commit>:README.md`, default the branch point 7399514), cuts out its
contract sections (the experiment file, the command line with its exit codes, the result
folder, where the checks run, the suite file and folder, the history, the index page,
`compare`, the cluster API), collects every name in them (each `code span`, each word of a
code block, each `--option`, each exit code sentence's numbers) and greps docs/*.md for each.

    python scripts/docs_coverage.py [COMMIT]   # prints the counts and every name not found; exit 1 if any
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
