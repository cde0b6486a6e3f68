package io.kafkachaos.clients;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

/** `--name value` pairs: the harness writes every argument, so no parser library is needed. */
final class Args {
    private final Map<String, String> values = new HashMap<>();

    Args(String[] args) {
        for (int i = 0; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("expected --name value pairs, got " + args[i]);
            }
            values.put(args[i].substring(2), args[i + 1]);
        }
    }

    String get(String name) {
        String v = values.get(name);
        if (v == null) {
            throw new IllegalArgumentException("missing --" + name);
        }
        return v;
    }

    String get(String name, String fallback) {
        return values.getOrDefault(name, fallback);
    }

    /** The client properties file the harness wrote (the spec's config), if any. */
    Properties properties(String name) throws IOException {
        Properties props = new Properties();
        String file = values.get(name);
        if (file != null) {
            try (Reader r = Files.newBufferedReader(Path.of(file))) {
                props.load(r);
            }
        }
        return props;
    }
}
