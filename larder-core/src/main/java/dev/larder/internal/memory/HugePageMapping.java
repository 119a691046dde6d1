package dev.larder.internal.memory;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Native memory mapped by {@code mmap} and advised {@code MADV_HUGEPAGE} before it is touched,
 * for caches built with {@code LarderBuilder.adviseHugePages(true)}. A kernel whose transparent
 * huge pages are {@code madvise} (the default of several distributions) backs only advised
 * memory with huge pages, and {@code Arena.allocate} cannot ask: it zeroes the memory (faulting
 * it in as small pages) before anyone could advise it. Fresh anonymous memory is zero already.
 *
 * <p>These are the only restricted FFM methods Larder calls (downcalls, and {@code reinterpret}
 * of the mapping), and only for a cache that asks: the JVM must allow native access to Larder
 * ({@code --enable-native-access=ALL-UNNAMED}, or the module's name), or it warns once (and in
 * a JDK that denies it, {@link #requireNativeAccess} fails the build). Linux on x86-64 and
 * aarch64 only ({@link #supported}), where the flags below are what they say.
 */
@SuppressWarnings("restricted") // the point of the class; see above
final class HugePageMapping {
    private static final int PROT_READ_WRITE = 0x1 | 0x2;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;
    private static final int MADV_DONTNEED = 4;
    private static final int MADV_HUGEPAGE = 14;
    private static final long MAP_FAILED = -1L;

    private HugePageMapping() {}

    /** Whether this platform is one whose {@code mmap} and {@code madvise} constants are the above. */
    static boolean supported() {
        String os = System.getProperty("os.name", "");
        String arch = System.getProperty("os.arch", "");
        return os.startsWith("Linux") && (arch.equals("amd64") || arch.equals("x86_64") || arch.equals("aarch64"));
    }

    /** The C library's calls, looked up on first use: a cache that never asks makes no restricted call. */
    private static final class Calls {
        static final MethodHandle MMAP;
        static final MethodHandle MADVISE;
        static final MethodHandle MUNMAP;

        static {
            Linker linker = Linker.nativeLinker();
            SymbolLookup libc = linker.defaultLookup();
            MMAP = linker.downcallHandle(
                    libc.find("mmap").orElseThrow(),
                    FunctionDescriptor.of(
                            ValueLayout.ADDRESS,
                            ValueLayout.ADDRESS,
                            ValueLayout.JAVA_LONG,
                            ValueLayout.JAVA_INT,
                            ValueLayout.JAVA_INT,
                            ValueLayout.JAVA_INT,
                            ValueLayout.JAVA_LONG));
            MADVISE = linker.downcallHandle(
                    libc.find("madvise").orElseThrow(),
                    FunctionDescriptor.of(
                            ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
            MUNMAP = linker.downcallHandle(
                    libc.find("munmap").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
        }
    }

    /**
     * Fails with a message that names the JVM flag if this JVM denies Larder native access; on a
     * platform that is not {@link #supported} there is nothing to check (pages are ordinary).
     */
    static void requireNativeAccess() {
        if (!supported()) {
            return;
        }
        try {
            MethodHandle loaded = Calls.MMAP;
            assert loaded != null;
        } catch (IllegalCallerException | LinkageError e) {
            throw new IllegalStateException(
                    "adviseHugePages(true) calls mmap and madvise through the FFM API, which this JVM denies: run"
                            + " it with --enable-native-access=ALL-UNNAMED (or dev.larder on the module path)",
                    e);
        }
    }

    /** The kernel's small page, the unit of a mapping's length. */
    private static final long SMALL_PAGE = 4096;

    /**
     * Maps {@code bytes} (at least a huge page) at a huge-page boundary and advises the kernel to
     * back its whole huge pages with huge pages (a last part under 2 MiB keeps small pages, so it
     * holds no memory it does not use); the memory reads as zero. Closing {@code arena} unmaps it.
     * A refused advice leaves ordinary pages, which work the same.
     */
    static MemorySegment map(long bytes, Arena arena) {
        long huge = NativeMemory.HUGE_PAGE;
        if (bytes < huge) {
            throw new IllegalArgumentException("bytes must be at least " + huge + ": " + bytes);
        }
        long mapped = (bytes + SMALL_PAGE - 1) / SMALL_PAGE * SMALL_PAGE + huge; // room to start at a boundary
        MemorySegment base;
        try {
            base = (MemorySegment)
                    Calls.MMAP.invokeExact(MemorySegment.NULL, mapped, PROT_READ_WRITE, MAP_PRIVATE_ANONYMOUS, -1, 0L);
        } catch (Throwable t) {
            throw new IllegalStateException("mmap of " + mapped + " bytes failed", t);
        }
        if (base.address() == MAP_FAILED) {
            throw new OutOfMemoryError("mmap of " + mapped + " bytes failed (native memory exhausted?)");
        }
        long aligned = (base.address() + huge - 1) & -huge;
        long advised = bytes / huge * huge;
        try {
            int ignored = (int) Calls.MADVISE.invokeExact(MemorySegment.ofAddress(aligned), advised, MADV_HUGEPAGE);
            return MemorySegment.ofAddress(aligned).reinterpret(bytes, arena, segment -> unmap(base, mapped));
        } catch (Throwable t) {
            unmap(base, mapped);
            throw new IllegalStateException("advising " + advised + " bytes at " + aligned + " failed", t);
        }
    }

    /**
     * Gives the memory of the small pages wholly inside {@code range} (a slice of a mapping made
     * here) back to the kernel: they stay mapped and read as zero until touched again, which
     * faults them in afresh (a huge page under part of them is split first). Returns false if
     * the kernel refused, in which case the memory is still held and its contents unchanged.
     * The range's arena must be open: the call holds it, so a closed one throws, never advises
     * memory that is no longer this mapping's.
     */
    static boolean discard(MemorySegment range) {
        long start = (range.address() + SMALL_PAGE - 1) & -SMALL_PAGE;
        long end = (range.address() + range.byteSize()) & -SMALL_PAGE;
        if (end <= start) {
            return true; // no whole small page to give back
        }
        try {
            MemorySegment pages = range.asSlice(start - range.address(), end - start);
            return (int) Calls.MADVISE.invokeExact(pages, pages.byteSize(), MADV_DONTNEED) == 0;
        } catch (IllegalStateException closed) {
            throw closed;
        } catch (Throwable t) {
            return false;
        }
    }

    private static void unmap(MemorySegment base, long bytes) {
        try {
            int ignored = (int) Calls.MUNMAP.invokeExact(base, bytes);
        } catch (Throwable t) {
            throw new IllegalStateException("munmap of " + bytes + " bytes failed", t);
        }
    }
}
