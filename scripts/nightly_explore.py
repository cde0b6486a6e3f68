"""The nightly's explore entries: every catalogue cell whose property should hold, as
`make nightly-explore`'s SPEC:CELLS words (docs/exploring.md, "In the nightly").

A cell is one when its spec carries `explore:` and its `expect:` bounds `lost` to 0 (acks=all
with enough in-sync replicas: a loss found there is news); suites, calibrations and the bug
files (experiments/bugs: reproductions of known bugs) are not searched, nor the specs given
with --skip (a demonstration that finds its loss by design). `--shard K/N` keeps every N-th
entry from the K-th, so that N jobs share the catalogue.

    python scripts/nightly_explore.py [--shard K/N] [--skip SPEC ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness.spec import expand_cells, load_spec  # noqa: E402
from harness.spec.expect import Bound  # noqa: E402

NOT_SEARCHED = ("suites", "calibrations", "bugs")  # folders under experiments/


def holds_no_loss(bound: object) -> bool:
    return isinstance(bound, Bound) and bound.op == "==" and bound.value == 0 and bound.ref is None


def entries(root: Path, skip: frozenset[str] = frozenset()) -> list[str]:
    """SPEC:CELLS for each spec with safe cells (its path relative to root, cell ids joined
    by commas), in path order."""
    out: list[str] = []
    experiments = root / "experiments"
    for path in sorted(experiments.rglob("*.yaml")):
        rel = path.relative_to(root).as_posix()
        if path.relative_to(experiments).parts[0] in NOT_SEARCHED or rel in skip:
            continue
        spec = load_spec(path)
        if spec.explore is None:
            continue
        safe = [
            c.id for c in expand_cells(spec, str(path)) if holds_no_loss(c.spec.expect.get("lost"))
        ]
        if safe:
            out.append(f"{rel}:{','.join(safe)}")
    return out


def shard(items: list[str], which: str | None) -> list[str]:
    """Every N-th item from the K-th (`K/N`, 1 <= K <= N); all of them without a shard."""
    if not which:
        return items
    k, n = (int(x) for x in which.split("/"))
    if not 1 <= k <= n:
        raise SystemExit(f"--shard {which}: expected K/N with 1 <= K <= N")
    return items[k - 1 :: n]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shard", default=None, help="K/N: this job's share of the entries")
    parser.add_argument("--skip", nargs="*", default=[], help="specs left out (paths)")
    args = parser.parse_args(argv)
    print(" ".join(shard(entries(ROOT, frozenset(args.skip)), args.shard)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
