#!/bin/bash
# Entry point of a Kafka node whose log directories a power loss may roll back
# (harness/faults/power_loss.py): each directory of KAFKA_CHAOS_PLFS_DIRS (colon-separated)
# is served by plfs (tools/plfs) from a backing folder on the container's own disk, which
# plfs writes through at once while it journals what was not fsynced. Mounted by the harness
# only for clusters with power_loss_fs; the image itself is unchanged. A node started again
# after a power loss mounts the rolled-back folders: Kafka then recovers its logs from them.
# Then the next entry point: the first of KAFKA_CHAOS_NEXT_ENTRYPOINT, or the image's own.
set -euo pipefail

state=/var/lib/kafka-chaos-plfs
control=/run/kafka-chaos-plfs.sock
log=/var/log/kafka-chaos-plfs.log
IFS=: read -r -a dirs <<< "${KAFKA_CHAOS_PLFS_DIRS:?KAFKA_CHAOS_PLFS_DIRS is empty}"
pairs=()
for i in "${!dirs[@]}"; do
  dir="${dirs[$i]}"
  backing="$state/$i/data"
  mkdir -p "$backing" "$state/$i/grave" "$dir"
  # What the image put in the directory before the first mount (nothing, usually) moves to
  # the backing folder, so the mount shows it.
  if [ -n "$(ls -A "$dir" 2>/dev/null)" ] && ! mountpoint -q "$dir"; then
    find "$dir" -mindepth 1 -maxdepth 1 -exec mv -t "$backing" {} +
  fi
  pairs+=(--pair "$backing:$dir:$state/$i/grave")
done
rm -f "$control"
/opt/kafka-chaos-plfs/plfs mount "${pairs[@]}" --control "$control" --log "$log" &
plfs_pid=$!
# The control socket answers once every mount is up and has passed plfs's self-test (a write
# through the mount reached the daemon: no kernel passthrough around the journal).
for _ in $(seq 1 300); do
  if /opt/kafka-chaos-plfs/plfs ctl --control "$control" status >/dev/null 2>&1; then
    chain="${KAFKA_CHAOS_NEXT_ENTRYPOINT:-}"
    next="${chain%%:*}"
    if [ "$next" = "$chain" ]; then unset KAFKA_CHAOS_NEXT_ENTRYPOINT; else export KAFKA_CHAOS_NEXT_ENTRYPOINT="${chain#*:}"; fi
    exec "${next:-/opt/kafka/bin/kafka-chaos-entrypoint}" "$@"
  fi
  if ! kill -0 "$plfs_pid" 2>/dev/null; then
    break
  fi
  sleep 0.1
done
echo "plfs did not mount ${KAFKA_CHAOS_PLFS_DIRS}:" >&2
cat "$log" >&2 || true
exit 72
