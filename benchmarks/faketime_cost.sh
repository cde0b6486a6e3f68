#!/bin/bash
# What libfaketime costs a JVM's clock reads, in the broker image: ns per
# System.currentTimeMillis() and System.nanoTime() call, without the library, with it
# re-reading its offset file on every call (FAKETIME_NO_CACHE=1) and at most once a second
# (FAKETIME_CACHE_DURATION=1, what clock-skew uses). Usage: benchmarks/faketime_cost.sh [calls] [rounds] [image]
set -euo pipefail
calls="${1:-1000000}" rounds="${2:-3}" image="${3:-kafka-chaos/kafka:3.9.2}"
here="$(cd "$(dirname "$0")" && pwd)"
docker run --rm -v "$here/faketime:/bench:ro" --entrypoint bash "$image" -c "
  lib=\$(compgen -G '/usr/lib/*/faketime/libfaketime.so.1' | head -n 1)
  echo '+3600' > /tmp/offset
  fake=(env LD_PRELOAD=\$lib FAKETIME_TIMESTAMP_FILE=/tmp/offset FAKETIME_DONT_FAKE_MONOTONIC=1)
  for r in \$(seq 1 $rounds); do
    echo \"none      \$(java /bench/ClockCost.java $calls)\"
    echo \"no_cache  \$(\"\${fake[@]}\" FAKETIME_NO_CACHE=1 java /bench/ClockCost.java $calls)\"
    echo \"cache_1s  \$(\"\${fake[@]}\" FAKETIME_CACHE_DURATION=1 java /bench/ClockCost.java $calls)\"
  done"
