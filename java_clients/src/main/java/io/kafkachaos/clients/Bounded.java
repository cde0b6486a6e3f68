package io.kafkachaos.clients;

/**
 * Runs a client's main class (ours, or Kafka's VerifiableConsumer) bounded the way the
 * harness's Python children are: it stops when the process that started it is gone (it was
 * re-parented: the runner died) or after max-s, so nothing is left running. The stop is a
 * System.exit (shutdown hooks close the client cleanly), then a halt if that hangs.
 *
 * Usage: Bounded PARENT_PID MAX_S MAIN_CLASS [ARGS...]
 */
public final class Bounded {
    private static final long CHECK_MS = 500;
    private static final long HALT_AFTER_MS = 30_000;

    private Bounded() {}

    public static void main(String[] args) throws Throwable {
        long parent = Long.parseLong(args[0]);
        long deadline = System.nanoTime() + (long) (Double.parseDouble(args[1]) * 1e9);
        String[] rest = java.util.Arrays.copyOfRange(args, 3, args.length);
        Thread watcher = new Thread(() -> watch(parent, deadline), "kafka-chaos-bound");
        watcher.setDaemon(true);
        watcher.start();
        Class.forName(args[2]).getMethod("main", String[].class).invoke(null, (Object) rest);
    }

    private static void watch(long parent, long deadline) {
        while (true) {
            try {
                Thread.sleep(CHECK_MS);
            } catch (InterruptedException e) {
                return;
            }
            long now = ProcessHandle.current().parent().map(ProcessHandle::pid).orElse(-1L);
            boolean orphaned = now != parent;
            if (orphaned || System.nanoTime() > deadline) {
                System.err.println("kafka-chaos: stopping (" + (orphaned ? "parent gone" : "max-s reached") + ")");
                Thread halt = new Thread(() -> {
                    try {
                        Thread.sleep(HALT_AFTER_MS);
                    } catch (InterruptedException e) {
                        // halting anyway
                    }
                    Runtime.getRuntime().halt(orphaned ? 3 : 0);
                }, "kafka-chaos-halt");
                halt.setDaemon(true);
                halt.start();
                System.exit(orphaned ? 3 : 0);
            }
        }
    }
}
