package io.kafkachaos.clients;

import java.util.Map;

/**
 * One JSON event per line on stdout, in the shape of Kafka's verifiable clients
 * (org.apache.kafka.tools.VerifiableProducer / VerifiableConsumer: "timestamp", "name", then
 * the event's fields), so one reader on the harness's side maps ours and Kafka's alike.
 * Each line is written whole (PrintStream.println is synchronized; System.out flushes on
 * println), so a SIGKILL leaves at most a torn last line, which the reader drops.
 */
final class Events {
    private Events() {}

    static void emit(String name, Object... fields) {
        StringBuilder b = new StringBuilder(128);
        b.append("{\"timestamp\":").append(System.currentTimeMillis());
        b.append(",\"name\":");
        string(b, name);
        for (int i = 0; i + 1 < fields.length; i += 2) {
            b.append(',');
            string(b, String.valueOf(fields[i]));
            b.append(':');
            value(b, fields[i + 1]);
        }
        b.append('}');
        System.out.println(b);
    }

    /** A raw JSON fragment (an array or object already rendered). */
    record Raw(String json) {}

    private static void value(StringBuilder b, Object v) {
        if (v == null) {
            b.append("null");
        } else if (v instanceof Number || v instanceof Boolean) {
            b.append(v);
        } else if (v instanceof Raw raw) {
            b.append(raw.json());
        } else {
            string(b, v.toString());
        }
    }

    static void string(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        b.append('"');
    }

    /** [{"topic":..,"partition":..,"offset":..}, ...] of committed offsets. */
    static Raw offsets(Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> offsets) {
        StringBuilder b = new StringBuilder("[");
        boolean first = true;
        for (var e : offsets.entrySet()) {
            if (!first) {
                b.append(',');
            }
            first = false;
            b.append("{\"topic\":");
            string(b, e.getKey().topic());
            b.append(",\"partition\":").append(e.getKey().partition());
            b.append(",\"offset\":").append(e.getValue().offset()).append('}');
        }
        return new Raw(b.append(']').toString());
    }

    /** [{"topic":..,"partition":..}, ...] of assigned or revoked partitions. */
    static Raw partitions(java.util.Collection<org.apache.kafka.common.TopicPartition> partitions) {
        StringBuilder b = new StringBuilder("[");
        boolean first = true;
        for (var tp : partitions) {
            if (!first) {
                b.append(',');
            }
            first = false;
            b.append("{\"topic\":");
            string(b, tp.topic());
            b.append(",\"partition\":").append(tp.partition()).append('}');
        }
        return new Raw(b.append(']').toString());
    }
}
