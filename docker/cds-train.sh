#!/bin/bash
# Image build step: start one KRaft broker through the image's own entry point, let it
# reach "started", stop it, and keep the classes it loaded as a dynamic class-data-sharing
# archive (AppCDS, JDK 13+). The entry point maps it at every start: the JVM then reads
# those classes pre-parsed instead of loading and verifying them from the jars (Kafka's own
# Docker-image work, KIP-975: start-up ~30 % faster). A JVM whose classpath or build does not
# match the archive ignores it (-Xshare:auto), so a stale archive costs nothing but speed.
set -euo pipefail
archive="${1:?usage: cds-train.sh ARCHIVE}"
work="$(mktemp -d)"
trap 'rm -rf "$work" /var/lib/kafka/*' EXIT
cat > "$work/kafka.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@localhost:19093
listeners=PLAINTEXT://localhost:19092,CONTROLLER://localhost:19093
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$work/data
offsets.topic.replication.factor=1
PROPS
export KAFKA_CHAOS_ROLE=kafka KAFKA_CHAOS_CONFIG="$(cat "$work/kafka.properties")"
export KAFKA_CHAOS_CLUSTER_ID=Y2RzLXRyYWluaW5nLTAwMQ
# The tuned flags of the entry point (no archive yet), plus the dump at exit.
export KAFKA_CHAOS_JVM_OPTS="-XX:TieredStopAtLevel=1 -XX:ParallelGCThreads=1 -XX:ConcGCThreads=1 -XX:-UsePerfData -XX:ArchiveClassesAtExit=$archive"
/opt/kafka/bin/kafka-chaos-entrypoint > "$work/broker.log" 2>&1 &
pid=$!
for _ in $(seq 1 240); do
  if grep -q "Kafka Server started\|\[KafkaServer id=1\] started" "$work/broker.log"; then
    break
  fi
  kill -0 "$pid" 2>/dev/null || { echo "cds-train: the broker exited" >&2; tail -n 30 "$work/broker.log" >&2; exit 1; }
  sleep 0.5
done
kill -TERM "$pid"
wait "$pid" || true
if [ ! -s "$archive" ]; then
  echo "cds-train: no archive written" >&2
  tail -n 30 "$work/broker.log" >&2
  exit 1
fi
