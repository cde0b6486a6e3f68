#!/bin/bash
# Entry point of a Kafka node whose wall clock a clock-skew fault may move
# (harness/faults/clock.py): the node's processes run under libfaketime, reading their
# offset from a file the fault rewrites (`+0` when not skewed). Mounted by the harness only
# for clusters with a fake clock; the image itself is unchanged. Then the next entry point:
# the first of KAFKA_CHAOS_NEXT_ENTRYPOINT (colon-separated: the power-loss filesystem's, the
# link proxies'), the rest passed on, or the image's own.
set -euo pipefail

dir=/var/lib/kafka-chaos-clock
mkdir -p "$dir"
# A node started again (after a kill or a stop) keeps the offset it had: a skew still
# active stays active.
[ -s "$dir/offset" ] || printf '+0\n' > "$dir/offset"
lib="$(compgen -G '/usr/lib/*/faketime/libfaketime.so.1' | head -n 1 || true)"
if [ -z "$lib" ]; then
  echo "no libfaketime in the image (Debian package faketime): rebuild the broker images" >&2
  exit 71
fi
export LD_PRELOAD="$lib"
export FAKETIME_TIMESTAMP_FILE="$dir/offset"
export FAKETIME_DONT_FAKE_MONOTONIC=1
export FAKETIME_CACHE_DURATION=1  # the file is read at most once a second (docs/benchmarks.md)
# libfaketime 0.9.10 "fixes" the deadline of every timed wait on a CLOCK_MONOTONIC condition
# variable on glibc >= 2.30: the JVM's own timers (WatcherThread, G1 service, monitor
# deflation...) then wake at once and loop, and an unskewed broker burnt ~2 cores and took
# a minute to start. With the fix off a deadline stays on the clock it was taken on (the
# monotonic one is never faked here), so waits last as long as asked (docs/benchmarks.md).
export FAKETIME_FORCE_MONOTONIC_FIX=0
chain="${KAFKA_CHAOS_NEXT_ENTRYPOINT:-}"
next="${chain%%:*}"
if [ "$next" = "$chain" ]; then unset KAFKA_CHAOS_NEXT_ENTRYPOINT; else export KAFKA_CHAOS_NEXT_ENTRYPOINT="${chain#*:}"; fi
exec "${next:-/opt/kafka/bin/kafka-chaos-entrypoint}" "$@"
