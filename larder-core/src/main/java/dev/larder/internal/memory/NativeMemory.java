package dev.larder.internal.memory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
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

    /**
     * A native block and the arena that owns it; or, if {@code slice}, a part of a larger advised
     * block (see {@link #slice}), whose arena is that block's.
     */
    public record Block(Arena arena, MemorySegment segment, boolean slice) {
        /**
         * The {@code bytes} at {@code offset} of {@code region}, a block mapped for huge pages
         * ({@link #allocate(long, boolean)} with advice), as a block of its own whose {@link
         * #free} gives its memory back but leaves the region mapped: the region's owner frees it,
         * after every slice.
         */
        public static Block slice(Block region, long offset, long bytes) {
            return new Block(region.arena, region.segment.asSlice(offset, bytes), true);
        }

        /**
         * Frees the block. Accesses racing with this throw IllegalStateException. A thread that
         * holds the block for a native call (a direct ByteBuffer view of a value passed to I/O
         * or a checksum, say) makes the close fail for as long as the call lasts: it is retried
         * until that call returns. A slice's memory is given back to the kernel instead (its
         * small pages read as zero afterwards); once its region is freed there is nothing to do.
         */
        public void free() {
            if (slice) {
                if (arena.scope().isAlive()) {
                    try {
                        HugePageMapping.discard(segment);
                    } catch (IllegalStateException regionClosed) {
                        // freed meanwhile, with all of its memory
                    }
                }
                return;
            }
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

    /**
     * A long of a native table read and written with plain accesses only (the frequency sketch's
     * counters, the ghost lists): the unaligned layout, though every offset is a multiple of 8,
     * spares each access the segment's alignment check, which the aligned one makes of every
     * address (~22 instructions of a sketch increment; docs/speed-work.md, forty-fourth session).
     */
    public static final ValueLayout.OfLong PLAIN_LONG = ValueLayout.JAVA_LONG_UNALIGNED;

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
     * {@link #allocate(long)}, and with {@code adviseHugePages} a block of at least a {@link
     * #HUGE_PAGE} on Linux is mapped at a huge-page boundary and its whole huge pages advised
     * for huge pages instead (see {@link HugePageMapping}): under a kernel setting of {@code
     * madvise} only such memory gets them. Smaller blocks and other platforms get an ordinary
     * block.
     */
    public static Block allocate(long bytes, boolean adviseHugePages) {
        if (!adviseHugePages || bytes < HUGE_PAGE || !HugePageMapping.supported()) {
            return allocate(bytes);
        }
        return inOwnArena(bytes, arena -> HugePageMapping.map(bytes, arena));
    }

    /**
     * Whether caches advise huge pages when their builder does not say: where the platform can
     * and the JVM grants Larder native access ({@code --enable-native-access}), which it then
     * uses without a warning.
     */
    public static boolean hugePageAdviceGranted() {
        return HugePageMapping.supported() && NativeMemory.class.getModule().isNativeAccessEnabled();
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
            return new Block(arena, segment, false);
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
