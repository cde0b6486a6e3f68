package io.kafkachaos.clients;

import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Reports every successful commit as an offsets_committed event, auto-commits included:
 * VerifiableConsumer reports only the commits it makes itself, and an auto-commit (in poll,
 * and the one close() makes) is exactly what a crash test needs to see. Set through
 * interceptor.classes only when auto-commit is on, so no commit is reported twice.
 */
public final class CommitReporter implements ConsumerInterceptor<Object, Object> {
    @Override
    public ConsumerRecords<Object, Object> onConsume(ConsumerRecords<Object, Object> records) {
        return records;
    }

    @Override
    public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {
        Events.emit("offsets_committed", "offsets", Events.offsets(offsets), "success", true, "auto", true);
    }

    @Override
    public void close() {}

    @Override
    public void configure(Map<String, ?> configs) {}
}
