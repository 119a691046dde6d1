package dev.larder.internal.memory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * The one place Larder allocates and frees native memory. Every block is a zeroed, 8-byte
 * aligned (or huge-page aligned: see {@link #allocate(long)}) segment in its own shared arena,
 * so it can be returned to the OS on its own; the arena is closed only after no reader can still
 * be looking at the block (the caller's grace period). Keeps a JVM-wide count of outstanding bytes so tests can prove nothing leaks.
 */
public final class NativeMemory {
    private static final AtomicLong OUTSTANDING = new AtomicLong();

    private NativeMemory() {}

    /** A native block of {@code bytes} bytes and the arena that owns it. */
    public record Block(Arena arena, MemorySegment segment) {
        /**
         * Frees the block. Accesses racing with this throw IllegalStateException. A thread that
         * holds the block for a native call (a direct ByteBuffer view of a value passed to I/O
         * or a checksum, say) makes the close fail for as long as the call lasts: it is retried
         * until that call returns.
         */
        public void free() {
            long size = segment.byteSize();
            for (int attempt = 0; ; attempt++) {
                if (!arena.scope().isAlive()) {
                    return; // already freed
                }
                try {
                    arena.close();
                    OUTSTANDING.addAndGet(-size);
                    return;
                } catch (IllegalStateException acquired) {
                    if (attempt < 100) {
                        Thread.onSpinWait();
                    } else if (attempt < 1_000) {
                        Thread.yield();
                    } else {
                        LockSupport.parkNanos(100_000);
                    }
                }
            }
        }
    }

    /** The size of a transparent huge page on x86-64 (and on arm64 with 4 KiB pages). */
    public static final long HUGE_PAGE = 2L * 1024 * 1024;

    /**
     * Allocates a zeroed block, 8-byte aligned; a block of a whole number of {@link #HUGE_PAGE}s
     * is aligned to one. A kernel whose transparent huge pages are {@code always} backs an
     * aligned 2 MiB range with one huge page (one TLB entry instead of 512), but only a range
     * that lies wholly within one mapping; a block of its own that is not aligned never has one.
     * At 10M entries the peers' single large regions got them and Larder's 1 MiB pages did not
     * (docs/speed-work.md, eighteenth session). The alignment costs address space, not memory:
     * the padding is never touched. Blocks of other sizes are not aligned: a huge page over a
     * block's partial last 2 MiB would hold memory the block does not use.
     */
    public static Block allocate(long bytes) {
        return allocate(bytes, bytes >= HUGE_PAGE && bytes % HUGE_PAGE == 0 ? HUGE_PAGE : 8);
    }

    /**
     * {@link #allocate(long)}, and with {@code adviseHugePages} a block of a whole number of
     * {@link #HUGE_PAGE}s on Linux is mapped and advised for huge pages instead (see {@link
     * HugePageMapping}): under a kernel setting of {@code madvise} only such memory gets them.
     * Other sizes and platforms get an ordinary block.
     */
    public static Block allocate(long bytes, boolean adviseHugePages) {
        if (!adviseHugePages || bytes < HUGE_PAGE || bytes % HUGE_PAGE != 0 || !HugePageMapping.supported()) {
            return allocate(bytes);
        }
        return inOwnArena(bytes, arena -> HugePageMapping.map(bytes, arena));
    }

    /** Whether a cache may ask for advised huge pages; fails naming the JVM flag it needs if not. */
    public static void requireHugePageAdvice() {
        HugePageMapping.requireNativeAccess();
    }

    /** Allocates a zeroed block aligned to {@code alignment} (a power of two). */
    public static Block allocate(long bytes, long alignment) {
        return inOwnArena(bytes, arena -> arena.allocate(bytes, alignment));
    }

    /** A block of {@code bytes} that {@code memory} makes in a shared arena of its own, counted. */
    private static Block inOwnArena(long bytes, Function<Arena, MemorySegment> memory) {
        Arena arena = Arena.ofShared();
        try {
            MemorySegment segment = memory.apply(arena);
            OUTSTANDING.addAndGet(bytes);
            return new Block(arena, segment);
        } catch (RuntimeException | OutOfMemoryError e) {
            arena.close();
            throw e;
        }
    }

    /** Native bytes currently allocated by every open Larder cache in this JVM. */
    public static long outstandingBytes() {
        return OUTSTANDING.get();
    }
}
