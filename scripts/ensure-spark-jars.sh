#!/usr/bin/env bash
# Spark's Kafka source for the pyspark in .venv, resolved by Maven into
# spark_jobs/jars/ (same version as pyspark; nothing is fetched at run time).
# Only the jars pyspark does not ship are kept.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/spark_jobs/jars"
version="$("$root/.venv/bin/python" -c 'import pyspark; print(pyspark.__version__)')"
stamp="$out/.version"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$version" ]; then
  echo "spark-jars: Kafka connector $version is up to date"
  exit 0
fi
echo "spark-jars: resolving spark-sql-kafka-0-10 $version with Maven"
rm -rf "$out"; mkdir -p "$out"
log="$(mktemp)"
mvn -B -Dstyle.color=never -gs "$root/spark_jobs/maven-settings.xml" -f "$root/spark_jobs/pom.xml" \
  -Dspark.version="$version" -DincludeScope=runtime -DoutputDirectory="$out" \
  -DincludeArtifactIds=spark-sql-kafka-0-10_2.13,spark-token-provider-kafka-0-10_2.13,kafka-clients,commons-pool2 \
  dependency:copy-dependencies >"$log" 2>&1 \
  || { echo "spark-jars: Maven failed:" >&2; grep -m 3 "ERROR" "$log" >&2 || tail -n 40 "$log" >&2; exit 1; }
rm -f "$log"
echo "$version" > "$stamp"
ls "$out"
