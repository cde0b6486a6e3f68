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
 * With --renew-ms N (explicit only; KIP-1222, the pattern of KafkaShareConsumer's Javadoc):
 * the work on a poll's records goes on across polls; on every turn of the poll loop (at most
 * min(N, 500) ms apart: a record the client fetched ahead waits in its buffer with its lock
 * running), each record still being worked on is acknowledged RENEW (the broker extends its
 * lock, a later poll returns it again, not counted as a delivery) and each finished one gets
 * its answer. A refused renewal is printed as share_acked with ack "renew"; one the broker
 * took is not.
 *
 * Args: --bootstrap --topic --group-id --name --ack explicit|implicit --processing-ms
 * --jitter-ms --release-every --reject-every --seed [--renew-ms N] [--config FILE]
 */
public final class ShareMember {
    private static final Duration POLL = Duration.ofMillis(500);
    private static final int SEQ_DIGITS = 20;

    private volatile boolean stopping = false;
    private final Map<String, Object[]> sent = new HashMap<>(); // "p/o" -> {seq, answer}
    // --renew-ms: "p/o" -> {work done at (epoch ms), delivery count} of records in hand
    private final Map<String, long[]> working = new HashMap<>();
    // RENEWs sent, not yet answered: "p/o" -> seq (a record's RENEW is answered before the
    // answer that follows it, so an answer for a key in here is the renewal's)
    private final Map<String, Long> renewing = new HashMap<>();

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
        long renewMs = Long.parseLong(a.get("renew-ms", "0"));
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
                int ms = processingMs + (jitterMs > 0 ? rng.nextInt(jitterMs + 1) : 0);
                if (renewMs > 0) {
                    workRenewing(consumer, records, ms, renewMs, releaseEvery, rejectEvery);
                    continue; // the next poll sends the answers and the renewals
                }
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    delivered(r);
                }
                if (ms > 0) {
                    Thread.sleep(ms);
                }
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    answer(consumer, r, explicit, releaseEvery, rejectEvery);
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

    private static void delivered(ConsumerRecord<byte[], byte[]> r) {
        Events.emit("share_delivered", "seq", seq(r.value()), "partition", r.partition(),
                "offset", r.offset(), "delivery_count", r.deliveryCount().map(Short::intValue).orElse(1));
    }

    /** The record's answer (ACCEPT; RELEASE / REJECT by seq), printed, then acknowledged. */
    private void answer(KafkaShareConsumer<byte[], byte[]> consumer, ConsumerRecord<byte[], byte[]> r,
            boolean explicit, long releaseEvery, long rejectEvery) {
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

    /**
     * One turn of renewing work: the poll's new deliveries (a record not in hand, or back with
     * a higher delivery count) start `ms` of work together; then up to min(renewMs, POLL)
     * passes (less when work ends sooner); then every finished record is answered and every
     * other one renewed. A record leaves the hand when answered or its renewal is refused.
     */
    private void workRenewing(KafkaShareConsumer<byte[], byte[]> consumer, ConsumerRecords<byte[], byte[]> records,
            int ms, long renewMs, long releaseEvery, long rejectEvery) throws InterruptedException {
        long now = System.currentTimeMillis();
        long firstDone = Long.MAX_VALUE;
        for (ConsumerRecord<byte[], byte[]> r : records) {
            String key = r.partition() + "/" + r.offset();
            long count = r.deliveryCount().map(Short::longValue).orElse(1L);
            long[] w = working.get(key);
            if (w == null || w[1] != count) {
                delivered(r);
                w = new long[] {now + ms, count};
                working.put(key, w);
            }
            firstDone = Math.min(firstDone, w[0]);
        }
        long wait = Math.min(Math.min(renewMs, POLL.toMillis()), Math.max(0, firstDone - now));
        if (wait > 0) {
            Thread.sleep(wait);
        }
        now = System.currentTimeMillis();
        for (ConsumerRecord<byte[], byte[]> r : records) {
            String key = r.partition() + "/" + r.offset();
            if (working.get(key)[0] <= now) {
                working.remove(key);
                answer(consumer, r, true, releaseEvery, rejectEvery);
            } else {
                renewing.put(key, seq(r.value()));
                try {
                    consumer.acknowledge(r, AcknowledgeType.RENEW);
                } catch (RuntimeException e) {
                    renewing.remove(key);
                    Events.emit("consumer_error", "error", "renew: " + e.getClass().getSimpleName() + ": " + e.getMessage());
                }
            }
        }
    }

    private void answered(Map<TopicIdPartition, Set<Long>> offsets, Exception exception) {
        String error = exception == null ? null : exception.getClass().getSimpleName();
        for (var e : offsets.entrySet()) {
            int partition = e.getKey().partition();
            for (long offset : e.getValue()) {
                String key = partition + "/" + offset;
                Long renewed = renewing.remove(key);
                if (renewed != null) {
                    if (exception != null) {
                        working.remove(key);
                        Events.emit("share_acked", "seq", renewed, "partition", partition, "offset", offset,
                                "ack", "renew", "error", error);
                    }
                    continue;
                }
                Object[] s = sent.remove(partition + "/" + offset);
                Events.emit("share_acked", "seq", s == null ? -1L : s[0], "partition", partition,
                        "offset", offset, "ack", s == null ? "accept" : s[1], "error", error);
            }
        }
    }
}
