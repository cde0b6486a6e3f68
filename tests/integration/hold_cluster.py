"""Start a 1-broker cluster, print its run id, then wait (bounded) to be killed."""

from __future__ import annotations

import sys
import time

from harness import KafkaCluster

with KafkaCluster(mode=sys.argv[1], brokers=1, run_id=sys.argv[2]) as cluster:
    print("READY", cluster.run_id, flush=True)
    time.sleep(300)
