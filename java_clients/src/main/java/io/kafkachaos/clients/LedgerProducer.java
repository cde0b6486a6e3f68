package io.kafkachaos.clients;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The ledger producer on Kafka's Java client: the harness's records (seq as 20 digits, key
 * "k<seq>", padded to record-size) at a rate until end-ms or the last seq, each one's
 * producer_send event printed before the client gets it, each delivery a
 * producer_send_success or producer_send_error event (VerifiableProducer's names and
 * fields, plus "seq"); ours besides: producer_schedule when the pacing starts (first_seq, rate,
 * end_ms, planned), producer_send_blocked for a send() call of 10 ms or more (seq,
 * blocked_ms), and shutdown_complete's blocked_ms (all time inside send()). VerifiableProducer itself cannot be the ledger producer: its values
 * are a counter (no record size, no seq the other readers decode, no first seq after a
 * restart) and it has no end time. The pacing is harness.workload.producer.core's.
 *
 * Args: --bootstrap --topic --name --acks --idempotence --rate --record-size --first-seq
 * --end-ms [--last-seq] [--config FILE (Java producer properties)]
 */
public final class LedgerProducer {
    private static final int BATCH = 500;
    private static final long LATE_GRACE_MS = 250;
    private static final long STOP_WAIT_S = 90;

    /** A send() call longer than this is reported (producer_send_blocked): a normal one takes µs. */
    private static final long BLOCK_REPORT_MS = 10;

    private final AtomicLong acked = new AtomicLong();
    private long blockedNanos = 0; // time inside send(), every call (the loop's thread only)
    private final AtomicLong failed = new AtomicLong();
    private volatile boolean stopping = false;

    public static void main(String[] argv) throws Exception {
        new LedgerProducer().run(new Args(argv));
    }

    private void run(Args a) throws Exception {
        String topic = a.get("topic");
        double rate = Double.parseDouble(a.get("rate"));
        int size = Integer.parseInt(a.get("record-size"));
        long firstSeq = Long.parseLong(a.get("first-seq"));
        long endMs = Long.parseLong(a.get("end-ms"));
        long lastSeq = Long.parseLong(a.get("last-seq", "-1"));
        Properties props = a.properties("config");
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, a.get("bootstrap"));
        props.put(ProducerConfig.ACKS_CONFIG, a.get("acks"));
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, a.get("idempotence"));
        props.put(ProducerConfig.CLIENT_ID_CONFIG, "ledger-" + a.get("name"));
        CountDownLatch done = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stopping = true;
            try {
                done.await(STOP_WAIT_S, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "ledger-producer-stop"));
        Events.emit("startup_complete", "client", "java", "pid", ProcessHandle.current().pid(),
                "first_seq", firstSeq);
        long seq = firstSeq;
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            long owed = firstSeq + Math.max((long) Math.ceil((endMs - System.currentTimeMillis()) / 1000.0 * rate), 0);
            long planned = Math.max((lastSeq >= 0 ? Math.min(owed, lastSeq + 1) : owed) - firstSeq, 0);
            Events.emit("producer_schedule", "first_seq", firstSeq, "rate", rate, "end_ms", endMs,
                    "planned", planned);
            long start = System.nanoTime();
            while (!stopping && inTime(endMs, seq < owed)) {
                if (lastSeq >= 0 && seq > lastSeq) {
                    break;
                }
                double elapsed = (System.nanoTime() - start) / 1e9;
                long due = Math.min(firstSeq + (long) (elapsed * rate) + 1, owed) - seq;
                if (due <= 0) {
                    double wait = Math.min(0.05, Math.max((seq - firstSeq) / rate - elapsed, 0.0));
                    Thread.sleep((long) (wait * 1000), (int) ((wait * 1e9) % 1e6));
                    continue;
                }
                long n = Math.min(due, BATCH);
                if (lastSeq >= 0) {
                    n = Math.min(n, lastSeq + 1 - seq);
                }
                for (long s = seq; s < seq + n; s++) {
                    Events.emit("producer_send", "seq", s);
                }
                for (long s = seq; s < seq + n; s++) {
                    send(producer, topic, s, size);
                }
                seq += n;
            }
            producer.flush();
        } catch (RuntimeException e) {
            Events.emit("producer_error", "exception", e.getClass().getName(), "message", e.getMessage());
            throw e;
        } finally {
            Events.emit("shutdown_complete", "attempted", seq - firstSeq, "acked", acked.get(),
                    "failed", failed.get(), "blocked_ms", blockedNanos / 1_000_000);
            done.countDown();
        }
    }

    private static boolean inTime(long endMs, boolean owed) {
        long now = System.currentTimeMillis();
        return now < endMs || (owed && now < endMs + LATE_GRACE_MS);
    }

    private void send(KafkaProducer<byte[], byte[]> producer, String topic, long seq, int size) {
        byte[] key = ("k" + seq).getBytes(StandardCharsets.US_ASCII);
        byte[] value = value(seq, size);
        String head = new String(value, 0, Math.min(value.length, 21), StandardCharsets.US_ASCII);
        long called = System.nanoTime();
        try {
            producer.send(new ProducerRecord<>(topic, key, value), (meta, err) -> {
                if (err == null) {
                    acked.incrementAndGet();
                    Events.emit("producer_send_success", "seq", seq, "key", "k" + seq, "value", head,
                            "topic", meta.topic(), "partition", meta.partition(), "offset", meta.offset());
                } else {
                    failed.incrementAndGet();
                    Events.emit("producer_send_error", "seq", seq, "key", "k" + seq, "value", head,
                            "topic", topic, "exception", err.getClass().getName(), "message", err.getMessage());
                }
            });
        } catch (RuntimeException err) {
            // send() itself threw (closed, interrupted, max.block.ms spent on metadata): no callback.
            failed.incrementAndGet();
            Events.emit("producer_send_error", "seq", seq, "key", "k" + seq, "value", head,
                    "topic", topic, "exception", err.getClass().getName(), "message", err.getMessage());
        } finally {
            blocked(seq, System.nanoTime() - called);
        }
    }

    /**
     * Time inside send(): it blocks for metadata of a partition it does not know yet and for
     * room in buffer.memory (each up to max.block.ms), so the schedule slips while it waits.
     */
    private void blocked(long seq, long nanos) {
        blockedNanos += nanos;
        long ms = nanos / 1_000_000;
        if (ms >= BLOCK_REPORT_MS) {
            Events.emit("producer_send_blocked", "seq", seq, "blocked_ms", ms);
        }
    }

    /** harness.workload.records.encode_value: seq as 20 digits, '|', 'x' up to size bytes. */
    static byte[] value(long seq, int size) {
        String head = String.format("%020d|", seq);
        byte[] out = new byte[Math.max(size, head.length())];
        Arrays.fill(out, (byte) 'x');
        System.arraycopy(head.getBytes(StandardCharsets.US_ASCII), 0, out, 0, head.length());
        return out;
    }
}
