"""A consume-transform-produce service, at-least-once: what many teams run in production.

Reads INPUT_TOPIC in the group GROUP_ID, writes each record's value to OUTPUT_TOPIC, flushes,
then commits the input offsets. A crash between the flush and the commit writes the batch
again (duplicates downstream); nothing is lost. Configured from the environment only
(SESSION_TIMEOUT_MS optional).
"""

import os
import signal

from confluent_kafka import Consumer, KafkaException, Producer

bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
consumer = Consumer(
    {
        "bootstrap.servers": bootstrap,
        "group.id": os.environ["GROUP_ID"],
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        # How long a crashed member keeps its partitions (librdkafka's default: 45 s).
        "session.timeout.ms": int(os.environ.get("SESSION_TIMEOUT_MS", "45000")),
    }
)
producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
output = os.environ["OUTPUT_TOPIC"]
running = True
signal.signal(signal.SIGTERM, lambda *_: globals().update(running=False))

consumer.subscribe([os.environ["INPUT_TOPIC"]])
while running:
    batch = [m for m in consumer.consume(500, timeout=0.5) if m.error() is None]
    if not batch:
        continue
    for msg in batch:
        # The business logic would go here; the value travels unchanged.
        producer.produce(output, value=msg.value(), key=msg.key())
        producer.poll(0)
    if producer.flush(60) > 0:
        raise SystemExit("output not delivered in 60 s; not committing the input")
    try:  # every record delivered: only now commit the input offsets
        consumer.commit(asynchronous=False)
    except KafkaException as exc:  # e.g. a rebalance took the partitions: read again
        print("commit failed:", exc.args[0], flush=True)
consumer.close()
producer.flush(10)
