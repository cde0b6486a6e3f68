# Kafka layer, identical for both base-image paths.
ARG BASE
FROM ${BASE}
ARG KAFKA_VERSION
ARG RECIPE
COPY jars/ /opt/kafka/libs/
COPY agent/ /opt/kafka-chaos-metrics/
COPY log4j.properties log4j2.properties jmx-exporter.yml /opt/kafka/config/
COPY entrypoint.sh /opt/kafka/bin/kafka-chaos-entrypoint
COPY cds-train.sh /tmp/cds-train.sh
RUN chmod 0755 /opt/kafka/bin/kafka-chaos-entrypoint && mkdir -p /var/lib/kafka /var/lib/zookeeper \
 && /tmp/cds-train.sh /opt/kafka/kafka-chaos.jsa && rm /tmp/cds-train.sh
LABEL kafka-chaos.kafka-version="${KAFKA_VERSION}" kafka-chaos.recipe="${RECIPE}"
ENTRYPOINT ["/opt/kafka/bin/kafka-chaos-entrypoint"]
