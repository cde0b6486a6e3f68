#!/bin/bash
# Container entry point for every node of a kafka-chaos cluster.
# KAFKA_CHAOS_ROLE: kafka | zookeeper; KAFKA_CHAOS_CONFIG: the properties file
# body; KAFKA_CHAOS_CLUSTER_ID: set for KRaft (storage is formatted once, so a
# restarted container keeps its data; passed as --cluster-id=ID, since an id may start
# with '-', as ZooKeeper's do, which a migration formats with); KAFKA_CHAOS_HEAP: JVM heap size;
# KAFKA_CHAOS_METRICS_PORT: when set, the Kafka server JVM runs the Prometheus JMX exporter
# agent, serving /metrics on that port (rules: /opt/kafka/config/jmx-exporter.yml);
# KAFKA_CHAOS_JVM_OPTS: when set, replaces the JVM flags tuned for a shared machine (below);
# KAFKA_CHAOS_FORMAT_ARGS: when set, more words for the storage format, a dynamic controller
# quorum's (KIP-853): `--initial-controllers id@host:port:dir,...` or `--no-initial-controllers`.
set -euo pipefail

role="${KAFKA_CHAOS_ROLE:?KAFKA_CHAOS_ROLE must be kafka or zookeeper}"
conf="/etc/kafka-chaos/${role}.properties"
mkdir -p /etc/kafka-chaos
printf '%s\n' "${KAFKA_CHAOS_CONFIG:?KAFKA_CHAOS_CONFIG is empty}" > "$conf"

heap="${KAFKA_CHAOS_HEAP:-512m}"
# Sized for several JVMs sharing two cores for a few minutes (docs/benchmarks.md, "A plain
# cell"): the C1 compiler only (C2's warm-up compiles burnt more CPU in a 60-75 s cell than
# the brokers' work), one GC worker and one concurrent GC thread, no hsperfdata file.
# KAFKA_CHAOS_JVM_OPTS replaces these flags when set ('' = the JVM's own defaults, which
# the benchmark compares against).
tuned=(-XX:TieredStopAtLevel=1 -XX:ParallelGCThreads=1 -XX:ConcGCThreads=1 -XX:-UsePerfData)
# The image's class-data-sharing archive (docker/cds-train.sh), when it has one.
archive=/opt/kafka/kafka-chaos.jsa
[ -s "$archive" ] && tuned+=(-XX:SharedArchiveFile="$archive" -Xlog:cds=off -Xlog:cds+dynamic=off)
if [ -n "${KAFKA_CHAOS_JVM_OPTS+set}" ]; then
  read -r -a tuned <<< "$KAFKA_CHAOS_JVM_OPTS"
fi
server=(-Xms"$heap" -Xmx"$heap" -XX:+UseG1GC -XX:MaxGCPauseMillis=20 "${tuned[@]}")
common=(-XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true)
if compgen -G "/opt/kafka/libs/log4j-core-*.jar" >/dev/null; then
  common+=(-Dlog4j2.configurationFile=/opt/kafka/config/log4j2.properties)
else
  common+=(-Dlog4j.configuration=file:/opt/kafka/config/log4j.properties)
fi
cp='/opt/kafka/libs/*'

case "$role" in
  zookeeper)
    exec java "${server[@]}" "${common[@]}" -cp "$cp" org.apache.zookeeper.server.quorum.QuorumPeerMain "$conf" ;;
  kafka)
    if [ -n "${KAFKA_CHAOS_METRICS_PORT:-}" ]; then
      agent="$(compgen -G '/opt/kafka-chaos-metrics/jmx_prometheus_javaagent-*.jar' | head -n 1 || true)"
      if [ -z "$agent" ]; then
        echo "no JMX exporter agent in the image: rebuild the broker images" >&2
        exit 72
      fi
      server+=(-javaagent:"$agent"="$KAFKA_CHAOS_METRICS_PORT":/opt/kafka/config/jmx-exporter.yml)
    fi
    if [ -n "${KAFKA_CHAOS_CLUSTER_ID:-}" ]; then
      quorum=()
      if [ -n "${KAFKA_CHAOS_FORMAT_ARGS:-}" ]; then
        read -r -a quorum <<< "$KAFKA_CHAOS_FORMAT_ARGS"
      fi
      java -Xmx256m "${tuned[@]}" "${common[@]}" -cp "$cp" kafka.tools.StorageTool format \
        --ignore-formatted --cluster-id="$KAFKA_CHAOS_CLUSTER_ID" -c "$conf" "${quorum[@]}"
    fi
    exec java "${server[@]}" "${common[@]}" -cp "$cp" kafka.Kafka "$conf" ;;
  *)
    echo "unknown KAFKA_CHAOS_ROLE '$role'" >&2; exit 64 ;;
esac
