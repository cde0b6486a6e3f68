"""What the link proxies cost when no toxic is on: benchmarks/capability_overhead.py for
link_proxies (its old name, kept for the commands docs/benchmarks.md gives).

Usage: python benchmarks/link_proxy_overhead.py [--rounds 3] [--out benchmarks/results/link_proxy_overhead.md]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from capability_overhead import main

if __name__ == "__main__":
    main(default="link_proxies")
