"""The Kafka releases the bug suite's cells run (experiments/bugs/), one line, for
`make bugs` to build before it runs them."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness.spec import load_spec  # noqa: E402
from harness.spec.matrix import expand_cells  # noqa: E402


def versions(root: Path) -> list[str]:
    found: set[str] = set()
    for path in sorted((root / "experiments" / "bugs").glob("*.yaml")):
        found |= {c.spec.cluster.version for c in expand_cells(load_spec(path), str(path))}
    return sorted(found, key=lambda v: tuple(int(p) for p in v.split(".")))


if __name__ == "__main__":
    print(" ".join(versions(ROOT)))
