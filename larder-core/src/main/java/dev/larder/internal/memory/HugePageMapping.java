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

    /**
     * Maps {@code bytes} (a whole number of huge pages) at a huge-page boundary and advises the
     * kernel to back them with huge pages; the memory reads as zero. Closing {@code arena}
     * unmaps it. A refused advice leaves ordinary pages, which work the same.
     */
    static MemorySegment map(long bytes, Arena arena) {
        long huge = NativeMemory.HUGE_PAGE;
        if (bytes <= 0 || bytes % huge != 0) {
            throw new IllegalArgumentException("bytes must be a positive multiple of " + huge + ": " + bytes);
        }
        long mapped = bytes + huge; // room to start at a boundary
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
        try {
            int ignored = (int) Calls.MADVISE.invokeExact(MemorySegment.ofAddress(aligned), bytes, MADV_HUGEPAGE);
            return MemorySegment.ofAddress(aligned).reinterpret(bytes, arena, segment -> unmap(base, mapped));
        } catch (Throwable t) {
            unmap(base, mapped);
            throw new IllegalStateException("advising " + bytes + " bytes at " + aligned + " failed", t);
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
