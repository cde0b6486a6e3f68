package io.kafkachaos.clients;

import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;

/** Prints the producer and consumer setting names of the Kafka clients on the classpath
 *  (scripts/java_settings.py turns them into harness/spec/java_settings.py). */
public final class ConfigNames {
    private ConfigNames() {}

    public static void main(String[] args) {
        for (String name : new TreeSet<>(ProducerConfig.configNames())) {
            System.out.println("producer " + name);
        }
        for (String name : new TreeSet<>(ConsumerConfig.configNames())) {
            System.out.println("consumer " + name);
        }
    }
}
