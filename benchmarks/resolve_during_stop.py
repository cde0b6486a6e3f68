"""How long a fault target takes to resolve while a broker is in a graceful stop.

A 3-broker ZooKeeper-mode cluster; broker 1 (the first trusted port) is stopped gracefully
`--rounds` times, either as a `stop` fault (booked in the cluster's active faults from its
first moment: the admin views no longer ask it) or by a bare container stop that no fault
books (how a fault's own stop looked before it was booked first). While it stops,
`leader-of:chaos/0` is resolved in a loop; each resolution's seconds are printed, then the
median and the maximum per variant. Both variants run on the same cluster.

Usage: python benchmarks/resolve_during_stop.py [--rounds 3] [--version 3.9.2]
"""

from __future__ import annotations

import argparse
import random
import statistics
import threading
import time
from collections.abc import Callable

from harness import KafkaCluster
from harness.common.waiting import wait_until
from harness.faults.stop import StopFault
from harness.faults.targets import Target


def _resolutions(cluster: KafkaCluster, stop: Callable[[], object]) -> list[float]:
    """Seconds of each resolution made while `stop` runs."""
    stopping = threading.Thread(target=stop)
    stopping.start()
    took: list[float] = []
    while stopping.is_alive():
        begun = time.monotonic()
        Target.parse("leader-of:chaos/0").resolve(cluster, random.Random(0))
        took.append(time.monotonic() - begun)
    stopping.join()
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--version", default="3.9.2")
    args = parser.parse_args()
    with KafkaCluster(mode="zookeeper", brokers=3, version=args.version) as cluster:
        cluster.create_topic("chaos", partitions=6, replication_factor=3)
        node = cluster.node(1)
        for variant in ("unbooked", "booked"):
            seconds: list[float] = []
            for _ in range(args.rounds):
                if variant == "booked":
                    fault = StopFault(cluster, 1)
                    seconds += _resolutions(cluster, fault.inject)
                    fault.heal()
                else:
                    seconds += _resolutions(cluster, node.stop)
                    node.start()
                    node.wait_started(cluster.start_timeout_s)
                    cluster.wait_registered(time.monotonic() + cluster.start_timeout_s)
                wait_until(
                    cluster.under_replicated,
                    120,
                    "every ISR full again",
                    done=lambda urp: not urp,
                    retry_on=Exception,
                )
            print(
                f"{variant}: {len(seconds)} resolutions, median {statistics.median(seconds):.2f} s,"
                f" max {max(seconds):.2f} s ({', '.join(f'{s:.2f}' for s in seconds)})",
                flush=True,
            )


if __name__ == "__main__":
    main()
