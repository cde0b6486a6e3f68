#!/usr/bin/env bash
# The harness's Java clients (java_clients/: io.kafkachaos.clients, built with Maven) and,
# for every Kafka version the broker images are built for (docker/versions.txt, or the
# versions given as arguments), the jars they run on in java_clients/lib/<version>/:
# Kafka's own clients and tools (VerifiableConsumer), resolved from Maven Central.
# A version whose stamp matches is left alone; so is an up-to-date jar.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
here="$root/java_clients"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
maven() {
  mvn -B -Dstyle.color=never -f "$here/pom.xml" "$@" >"$log" 2>&1 \
    || { echo "java-clients: Maven failed:" >&2; grep -m 5 "ERROR" "$log" >&2 || tail -n 40 "$log" >&2; exit 1; }
}
jar="$here/target/kafka-chaos-clients.jar"
if [ ! -f "$jar" ] || [ -n "$(find "$here/src" "$here/pom.xml" -newer "$jar" -print -quit)" ]; then
  echo "java-clients: building $jar"
  maven package
fi
if [ "$#" -gt 0 ]; then versions=("$@"); else mapfile -t versions < <(grep -Ev '^\s*(#|$)' "$root/docker/versions.txt"); fi
for version in "${versions[@]}"; do
  out="$here/lib/$version"
  if [ -f "$out/.complete" ]; then
    echo "java-clients: Kafka $version jars are up to date"
    continue
  fi
  echo "java-clients: resolving Kafka $version client and tools jars with Maven"
  rm -rf "$out"
  maven -Dkafka.version="$version" -DincludeScope=runtime -DoutputDirectory="$out" dependency:copy-dependencies
  touch "$out/.complete"
done

# The share-group member (KafkaShareConsumer, Kafka 4.2+) is compiled on its own against the
# newest 4.x jars resolved above (the main jar is compiled against 3.9.2's API, which has no
# share consumer): java_clients/target/kafka-chaos-share.jar.
share_src="$here/src/share/java"
share_jar="$here/target/kafka-chaos-share.jar"
share_lib=""
for version in "${versions[@]}"; do
  case "$version" in 4.[2-9].*|[5-9].*) share_lib="$here/lib/$version" ;; esac
done
if [ -n "$share_lib" ] && { [ ! -f "$share_jar" ] || [ -n "$(find "$share_src" "$jar" -newer "$share_jar" -print -quit)" ]; }; then
  echo "java-clients: building $share_jar against $(basename "$share_lib")"
  classes="$(mktemp -d)"
  javac --release 17 -nowarn -d "$classes" -cp "$jar:$share_lib/*" $(find "$share_src" -name '*.java') \
    || { echo "java-clients: javac failed on $share_src" >&2; rm -rf "$classes"; exit 1; }
  jar --create --file "$share_jar" -C "$classes" .
  rm -rf "$classes"
fi
