#!/usr/bin/env bash
# Build the broker images kafka-chaos/kafka:<version> without a container
# registry: a Debian root filesystem from debootstrap (host's own apt mirror)
# with Debian's JRE, imported with `docker import`, plus Kafka's jars resolved
# by Maven. KAFKA_CHAOS_BASE=pull takes debian:bookworm-slim from a registry
# instead (same layout). Images carry a hash of their recipe: an unchanged
# recipe is not rebuilt.
#
# Usage: docker/build-images.sh [VERSION ...]   (default: docker/versions.txt)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
base_mode="${KAFKA_CHAOS_BASE:-debootstrap}"
base_tag="kafka-chaos/base:latest"
base_packages="default-jre-headless,iptables,procps,iproute2,faketime"
log4j2_for_4_0="2.24.3"  # Kafka 4.0's log4j2 (its gradle/dependencies.gradle)

if [ "$#" -gt 0 ]; then
  versions=("$@")
else
  mapfile -t versions < <(grep -vE '^\s*(#|$)' "$here/versions.txt")
fi

work="$(mktemp -d /tmp/kafka-chaos-build.XXXXXX)"
trap 'rm -rf "$work"' EXIT

recipe_of() { cat "$@" | sha256sum | cut -c1-16; }
label_of() {
  docker image inspect -f '{{ index .Config.Labels "kafka-chaos.recipe" }}' "$1" 2>/dev/null || true
}

build_base_debootstrap() {
  if ! command -v debootstrap >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
    else
      echo "build-images: debootstrap is missing and cannot be installed (needs root on Debian)." >&2
      echo "              Install debootstrap, or set KAFKA_CHAOS_BASE=pull where a registry is reachable." >&2
      exit 1
    fi
  fi
  local suite mirror rootfs
  suite="$(. /etc/os-release && echo "$VERSION_CODENAME")"
  mirror="$(python3 "$here/apt_mirror.py")"
  rootfs="$work/rootfs"
  echo "build-images: debootstrap $suite (host's apt mirror) -> $rootfs"
  debootstrap --variant=minbase --include="$base_packages" "$suite" "$rootfs" "$mirror" \
    >"$work/debootstrap.log" 2>&1 || { tail -n 30 "$work/debootstrap.log" >&2; exit 1; }
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* \
         "$rootfs"/usr/share/doc "$rootfs"/usr/share/man
  tar -C "$rootfs" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change "LABEL kafka-chaos.recipe=$1" - "$base_tag" >/dev/null
  rm -rf "$rootfs"
}

build_base() {
  local recipe
  recipe="$(recipe_of <(echo "$base_mode $base_packages") "$here/base.Dockerfile")"
  if [ "$(label_of "$base_tag")" = "$recipe" ]; then
    echo "build-images: $base_tag is up to date"
  elif [ "$base_mode" = pull ]; then
    docker build -q -f "$here/base.Dockerfile" --label "kafka-chaos.recipe=$recipe" -t "$base_tag" "$here" >/dev/null
  elif [ "$base_mode" = debootstrap ]; then
    build_base_debootstrap "$recipe"
  else
    echo "build-images: KAFKA_CHAOS_BASE must be 'debootstrap' or 'pull', not '$base_mode'" >&2
    exit 2
  fi
  base_recipe="$recipe"
}

maven() {
  mvn -B -Dstyle.color=never -f "$here/pom.xml" -DincludeScope=runtime "$@" \
    dependency:copy-dependencies >"$work/maven.log" 2>&1 \
    || { echo "build-images: Maven failed:" >&2; grep -m 3 "ERROR" "$work/maven.log" >&2 || tail -n 40 "$work/maven.log" >&2; exit 1; }
}

build_kafka() {
  local version="$1" tag="kafka-chaos/kafka:$1" recipe ctx log4j
  recipe="$(recipe_of <(echo "$version $base_recipe") "$here/pom.xml" "$here/kafka.Dockerfile" \
            "$here/entrypoint.sh" "$here/cds-train.sh" "$here/log4j.properties" "$here/log4j2.properties" \
            "$here/jmx-exporter.yml")"
  if [ "$(label_of "$tag")" = "$recipe" ]; then
    echo "build-images: $tag is up to date"
    return
  fi
  ctx="$work/$version"
  echo "build-images: resolving Kafka $version jars with Maven"
  maven -Dkafka.version="$version" -DoutputDirectory="$ctx/jars"
  # Kafka 4.x logs through log4j2 and needs an SLF4J binding of the same version.
  log4j="$(find "$ctx/jars" -name 'log4j-core-*.jar' -printf '%f\n' | sed -E 's/log4j-core-(.*)\.jar/\1/')"
  # 4.0.x names no log4j2 in its Maven dependencies (from 4.1 kafka-server brings log4j-core):
  # without it the broker would log nothing. Take the log4j2 its release shipped.
  if [ -z "$log4j" ] && [ "${version%%.*}" -ge 4 ]; then
    log4j="$log4j2_for_4_0"
  fi
  if [ -n "$log4j" ]; then
    maven -Dkafka.version="$version" -Dlog4j2="$log4j" -DoutputDirectory="$ctx/jars"
  fi
  # The JMX exporter agent (Kafka's own metrics over HTTP), apart from Kafka's jars.
  maven -Dkafka.version="$version" -Djmx-agent -DincludeArtifactIds=jmx_prometheus_javaagent \
    -DexcludeTransitive=true -DoutputDirectory="$ctx/agent"
  cp "$here/entrypoint.sh" "$here/cds-train.sh" "$here/log4j.properties" "$here/log4j2.properties" \
    "$here/jmx-exporter.yml" "$ctx/"
  echo "build-images: building $tag"
  docker build -q -f "$here/kafka.Dockerfile" --build-arg BASE="$base_tag" \
    --build-arg KAFKA_VERSION="$version" --build-arg RECIPE="$recipe" -t "$tag" "$ctx" >/dev/null
}

build_base
for v in "${versions[@]}"; do
  build_kafka "$v"
done
