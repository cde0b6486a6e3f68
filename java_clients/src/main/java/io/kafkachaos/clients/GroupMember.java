package io.kafkachaos.clients;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A group member on Kafka's Java consumer for what VerifiableConsumer cannot express: a
 * commit before processing, and simulated work per batch (processing-ms plus a seeded
 * 0..jitter-ms). Its events are VerifiableConsumer's (partitions_assigned / _revoked,
 * record_data per record, records_consumed, offsets_committed, shutdown_complete), so the
 * harness reads both alike; record_data comes after the work: printed is processed.
 *
 * Args: --bootstrap --topic --group-id --name --commit auto|after-process|before-process
 * --processing-ms --jitter-ms --seed [--config FILE (Java consumer properties)]
 */
public final class GroupMember implements ConsumerRebalanceListener {
    private static final Duration POLL = Duration.ofMillis(500);
    private static final int VALUE_HEAD = 21;

    private volatile boolean stopping = false;

    public static void main(String[] argv) throws Exception {
        new GroupMember().run(new Args(argv));
    }

    private void run(Args a) throws Exception {
        String commit = a.get("commit");
        int processingMs = Integer.parseInt(a.get("processing-ms"));
        int jitterMs = Integer.parseInt(a.get("jitter-ms"));
        Random rng = new Random(a.get("seed").hashCode());
        Properties props = a.properties("config");
        props.putIfAbsent(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, a.get("bootstrap"));
        props.put(ConsumerConfig.GROUP_ID_CONFIG, a.get("group-id"));
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, a.get("name"));
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, Boolean.toString(commit.equals("auto")));
        if (commit.equals("auto")) {
            props.put(ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG, CommitReporter.class.getName());
        }
        KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        CountDownLatch done = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stopping = true;
            consumer.wakeup();
            try {
                done.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "group-member-stop"));
        Events.emit("startup_complete", "client", "java", "pid", ProcessHandle.current().pid());
        try {
            consumer.subscribe(List.of(a.get("topic")), this);
            while (!stopping) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(POLL);
                if (records.isEmpty()) {
                    continue;
                }
                Map<TopicPartition, OffsetAndMetadata> next = nextOffsets(records);
                if (commit.equals("before-process")) {
                    commitSync(consumer, next);
                }
                int ms = processingMs + (jitterMs > 0 ? rng.nextInt(jitterMs + 1) : 0);
                if (ms > 0) {
                    Thread.sleep(ms);
                }
                print(records);
                if (commit.equals("after-process")) {
                    commitSync(consumer, next);
                }
            }
        } catch (WakeupException e) {
            // stopping
        } finally {
            try {
                consumer.close();
            } finally {
                Events.emit("shutdown_complete");
                done.countDown();
            }
        }
    }

    private static Map<TopicPartition, OffsetAndMetadata> nextOffsets(ConsumerRecords<byte[], byte[]> records) {
        Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
        for (TopicPartition tp : records.partitions()) {
            List<ConsumerRecord<byte[], byte[]>> part = records.records(tp);
            next.put(tp, new OffsetAndMetadata(part.get(part.size() - 1).offset() + 1));
        }
        return next;
    }

    private static void commitSync(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, OffsetAndMetadata> next) {
        try {
            consumer.commitSync(next);
            Events.emit("offsets_committed", "offsets", Events.offsets(next), "success", true);
        } catch (WakeupException e) {
            throw e;
        } catch (RuntimeException e) {
            Events.emit("offsets_committed", "offsets", Events.offsets(next), "success", false,
                    "error", e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    private static void print(ConsumerRecords<byte[], byte[]> records) {
        for (TopicPartition tp : records.partitions()) {
            for (ConsumerRecord<byte[], byte[]> r : records.records(tp)) {
                byte[] v = r.value();
                String head = v == null ? null : new String(v, 0, Math.min(v.length, VALUE_HEAD), StandardCharsets.US_ASCII);
                String key = r.key() == null ? null : new String(r.key(), StandardCharsets.US_ASCII);
                Events.emit("record_data", "key", key, "value", head, "topic", r.topic(),
                        "partition", r.partition(), "offset", r.offset());
            }
        }
        Events.emit("records_consumed", "count", records.count());
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
        Events.emit("partitions_assigned", "partitions", Events.partitions(partitions));
    }

    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
        Events.emit("partitions_revoked", "partitions", Events.partitions(partitions));
    }
}
