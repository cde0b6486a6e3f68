package io.kafkachaos.clients;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A share-group member (KIP-932) on Kafka's Java KafkaShareConsumer, the librdkafka member's
 * twin (harness/workload/share/member.py): every delivery printed as it is polled
 * (share_delivered, with the broker's delivery count), simulated work, the records it will
 * ACCEPT printed (share_consumed) before they are acknowledged, then the answers: explicit
 * acknowledges each record (ACCEPT; RELEASE / REJECT by seq) and commits them asynchronously;
 * implicit lets the next poll accept them. The broker's answer to each acknowledgement comes
 * back through the acknowledgement-commit callback (share_acked, with the exception's name
 * when it was refused). Compiled against Kafka 4.2+ only (scripts/build-java-clients.sh).
 *
 * Args: --bootstrap --topic --group-id --name --ack explicit|implicit --processing-ms
 * --jitter-ms --release-every --reject-every --seed [--config FILE]
 */
public final class ShareMember {
    private static final Duration POLL = Duration.ofMillis(500);
    private static final int SEQ_DIGITS = 20;

    private volatile boolean stopping = false;
    private final Map<String, Object[]> sent = new HashMap<>(); // "p/o" -> {seq, answer}

    public static void main(String[] argv) throws Exception {
        new ShareMember().run(new Args(argv));
    }

    private static long seq(byte[] value) {
        if (value == null || value.length < SEQ_DIGITS) {
            return -1;
        }
        try {
            return Long.parseLong(new String(value, 0, SEQ_DIGITS, StandardCharsets.US_ASCII));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private void run(Args a) throws Exception {
        String ack = a.get("ack");
        boolean explicit = ack.equals("explicit");
        int processingMs = Integer.parseInt(a.get("processing-ms"));
        int jitterMs = Integer.parseInt(a.get("jitter-ms"));
        long releaseEvery = Long.parseLong(a.get("release-every"));
        long rejectEvery = Long.parseLong(a.get("reject-every"));
        Random rng = new Random(a.get("seed").hashCode());
        Properties props = a.properties("config");
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, a.get("bootstrap"));
        props.put(ConsumerConfig.GROUP_ID_CONFIG, a.get("group-id"));
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, a.get("name"));
        props.put("share.acknowledgement.mode", ack);
        KafkaShareConsumer<byte[], byte[]> consumer =
                new KafkaShareConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        consumer.setAcknowledgementCommitCallback(this::answered);
        CountDownLatch done = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stopping = true;
            consumer.wakeup();
            try {
                done.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "share-member-stop"));
        Events.emit("startup_complete", "client", "java", "pid", ProcessHandle.current().pid());
        try {
            consumer.subscribe(List.of(a.get("topic")));
            while (!stopping) {
                ConsumerRecords<byte[], byte[]> records;
                try {
                    records = consumer.poll(POLL);
                } catch (WakeupException e) {
                    throw e;
                } catch (RuntimeException e) {
                    Events.emit("consumer_error", "error", e.getClass().getSimpleName() + ": " + e.getMessage());
                    Thread.sleep(500);
                    continue;
                }
                if (records.isEmpty()) {
                    continue;
                }
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    Events.emit("share_delivered", "seq", seq(r.value()), "partition", r.partition(),
                            "offset", r.offset(), "delivery_count", r.deliveryCount().map(Short::intValue).orElse(1));
                }
                int ms = processingMs + (jitterMs > 0 ? rng.nextInt(jitterMs + 1) : 0);
                if (ms > 0) {
                    Thread.sleep(ms);
                }
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    long s = seq(r.value());
                    String answer = "accept";
                    if (explicit && rejectEvery > 0 && s >= 0 && s % rejectEvery == 0) {
                        answer = "reject";
                    } else if (explicit && releaseEvery > 0 && s >= 0 && s % releaseEvery == 0) {
                        answer = "release";
                    }
                    if (answer.equals("accept")) {
                        Events.emit("share_consumed", "seq", s, "partition", r.partition(), "offset", r.offset());
                    }
                    sent.put(r.partition() + "/" + r.offset(), new Object[] {s, answer});
                    if (explicit) {
                        AcknowledgeType type = switch (answer) {
                            case "reject" -> AcknowledgeType.REJECT;
                            case "release" -> AcknowledgeType.RELEASE;
                            default -> AcknowledgeType.ACCEPT;
                        };
                        try {
                            consumer.acknowledge(r, type);
                        } catch (RuntimeException e) {
                            Events.emit("consumer_error", "error", "acknowledge: " + e.getClass().getSimpleName() + ": " + e.getMessage());
                        }
                    }
                }
                if (explicit) {
                    try {
                        consumer.commitAsync();
                    } catch (WakeupException e) {
                        throw e;
                    } catch (RuntimeException e) {
                        Events.emit("consumer_error", "error", "commitAsync: " + e.getClass().getSimpleName() + ": " + e.getMessage());
                    }
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

    private void answered(Map<TopicIdPartition, Set<Long>> offsets, Exception exception) {
        String error = exception == null ? null : exception.getClass().getSimpleName();
        for (var e : offsets.entrySet()) {
            int partition = e.getKey().partition();
            for (long offset : e.getValue()) {
                Object[] s = sent.remove(partition + "/" + offset);
                Events.emit("share_acked", "seq", s == null ? -1L : s[0], "partition", partition,
                        "offset", offset, "ack", s == null ? "accept" : s[1], "error", error);
            }
        }
    }
}
