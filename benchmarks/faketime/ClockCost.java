// Nanoseconds per System.currentTimeMillis() and per System.nanoTime() call in this JVM
// (run with and without libfaketime preloaded: benchmarks/faketime_cost.sh).
public class ClockCost {
  public static void main(String[] args) {
    int n = Integer.parseInt(args[0]);
    long sink = 0;
    for (int i = 0; i < 200_000; i++) sink += System.currentTimeMillis() + System.nanoTime();
    long t0 = System.nanoTime();
    for (int i = 0; i < n; i++) sink += System.currentTimeMillis();
    long t1 = System.nanoTime();
    for (int i = 0; i < n; i++) sink += System.nanoTime();
    long t2 = System.nanoTime();
    System.out.printf("currentTimeMillis_ns %.1f nanoTime_ns %.1f (%d)%n",
        (t1 - t0) / (double) n, (t2 - t1) / (double) n, sink & 1);
  }
}
