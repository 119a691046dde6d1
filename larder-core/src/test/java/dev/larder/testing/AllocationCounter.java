package dev.larder.testing;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import org.junit.jupiter.api.Assumptions;

/**
 * For tests: the current thread's allocated bytes, from com.sun.management.ThreadMXBean. Looked up
 * reflectively because the tests compile inside module dev.larder, which reads neither
 * java.management nor jdk.management.
 */
public record AllocationCounter(Object bean, MethodHandle getter) {
    public static AllocationCounter create() {
        try {
            Object bean = Class.forName("java.lang.management.ManagementFactory")
                    .getMethod("getThreadMXBean")
                    .invoke(null);
            Class<?> type = Class.forName("com.sun.management.ThreadMXBean");
            Assumptions.assumeTrue(type.isInstance(bean), "no per-thread allocation counter");
            MethodHandle getter = MethodHandles.publicLookup()
                    .findVirtual(type, "getCurrentThreadAllocatedBytes", MethodType.methodType(long.class));
            return new AllocationCounter(bean, getter);
        } catch (ReflectiveOperationException e) {
            Assumptions.abort("no per-thread allocation counter: " + e);
            throw new AssertionError(e);
        }
    }

    public long bytes() {
        try {
            return (long) getter.invoke(bean);
        } catch (Throwable e) {
            throw new AssertionError(e);
        }
    }

    /** The fewest bytes {@code work} allocated over a few rounds (the first ones warm up). */
    public long fewestBytes(Runnable work) {
        long best = Long.MAX_VALUE;
        for (int round = 0; round < 5; round++) {
            long before = bytes();
            work.run();
            best = Math.min(best, bytes() - before);
        }
        return best;
    }
}
