"""Add calibration.json files to their specs' calibration records (what `harness calibrate
--record` does at the end of its runs), for calibrations run without it.

    python scripts/record_calibration.py results/<…>-calibrate-<spec>/calibration.json …

Each file's `file` (the spec as `calibrate` was given it, relative to where it ran: the
project root for `make` and the docs) says which record it joins:
experiments/calibrations/<spec name>.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness.results.calibration_record import (  # noqa: E402
    merged,
    read_record,
    record_path,
    write_record,
)


def main(argv: list[str]) -> int:
    if not argv or any(a.startswith("-") for a in argv):
        print(__doc__, file=sys.stderr)
        return 2
    for arg in argv:
        doc = json.loads(Path(arg).read_text(encoding="utf-8"))
        spec = ROOT / doc["file"]
        if not spec.is_file():
            print(f"{arg}: its spec {doc['file']} is not in {ROOT}", file=sys.stderr)
            return 2
        path = record_path(spec, doc["spec"])
        write_record(path, merged(read_record(path), doc))
        print(f"{arg} -> {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
