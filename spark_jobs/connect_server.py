"""`python -m spark_jobs.connect_server --port N`: a Spark Connect server with the checks'
session settings, for many short processes that each verify a cell (make test's integration
lane): each of them then opens a session on a warm JVM (~1 s) instead of starting a cold one
(~8 s) whose first verify also pays the JIT's warm-up (~15 s more, 2026-11-28).

It prints `ready sc://127.0.0.1:N` once it answers, and stops on SIGTERM, when its parent
dies (it watches its parent pid, like the harness's other children) or after `--max-s`.
It listens on 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import os
import signal
import time
from collections.abc import Sequence
from types import FrameType

from spark_jobs.session import CONNECT_SCHEME, DEFAULT_MASTER, spark_session

READY = "ready"
HOST = "127.0.0.1"


def url(port: int) -> str:
    """The address clients name (`--spark-master`, KAFKA_CHAOS_SPARK_MASTER)."""
    return f"{CONNECT_SCHEME}{HOST}:{port}"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m spark_jobs.connect_server")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--max-s", type=float, default=4 * 3600.0)
    parser.add_argument(
        "--large-cells", action="store_true", help="the JVM's default JIT tiers (big cells)"
    )
    args = parser.parse_args(argv)
    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    parent = os.getppid()
    spark = spark_session(
        app="kafka-chaos-connect",
        master=DEFAULT_MASTER,
        small_cells=not args.large_cells,
        conf={
            "spark.plugins": "org.apache.spark.sql.connect.SparkConnectPlugin",
            "spark.connect.grpc.binding.address": HOST,
            "spark.connect.grpc.binding.port": str(args.port),
        },
    )
    try:
        print(f"{READY} {url(args.port)}", flush=True)
        deadline = time.monotonic() + args.max_s
        while not stopping and os.getppid() == parent and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
