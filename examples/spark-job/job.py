"""A data engineer's own Structured Streaming job: Kafka in, Kafka out, with a checkpoint.

Reads INPUT_TOPIC and writes every record (key and value unchanged) to OUTPUT_TOPIC with
Spark's Kafka source and sink. The checkpoint (under STATE_DIR) holds the input offsets of
each micro-batch, so a restarted job resumes where the last committed batch ended. Spark's
Kafka sink is at-least-once: a batch that was written but not yet committed to the
checkpoint when the driver died is written again on restart.

SPARK_JARS names the folder holding Spark's Kafka connector jars (no download at run time).
"""

import os
from pathlib import Path

from pyspark.sql import SparkSession

jars = sorted(str(p) for p in Path(os.environ["SPARK_JARS"]).glob("*.jar"))
spark = (
    SparkSession.builder.appName("copy-job")
    .master("local[2]")
    .config("spark.jars", ",".join(jars))
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.ui.enabled", "false")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("WARN")

bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
records = (
    spark.readStream.format("kafka")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("subscribe", os.environ["INPUT_TOPIC"])
    .option("startingOffsets", "earliest")
    .load()
    .select("key", "value")  # the business logic would go here; the value travels unchanged
)
query = (
    records.writeStream.format("kafka")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("topic", os.environ["OUTPUT_TOPIC"])
    .option("checkpointLocation", os.path.join(os.environ["STATE_DIR"], "checkpoint"))
    .start()  # the default trigger: the next micro-batch as soon as the last one is done
)
query.awaitTermination()
