package dev.larder.internal.memory;

import java.lang.foreign.MemorySegment;

/**
 * Pages smaller than a huge page, carved from 2 MiB slabs that are mapped and advised {@code
 * MADV_HUGEPAGE} ({@link HugePageMapping}), so that a log of 128 KiB pages is backed by huge
 * pages too: one TLB entry covers a slab's pages instead of 512 small ones covering one page. A
 * GET at 1M entries, whose record is a random miss in ~290 MB, measured 10-15% faster on huge
 * pages (docs/speed-work.md, twenty-ninth and thirtieth sessions).
 *
 * <p>Page {@code id} always lives at the same place: slab {@code id / pagesPerSlab}, at {@code
 * (id % pagesPerSlab) * pageSize}. A slab is mapped when its first page is taken and unmapped
 * when its last page is released; a page released while others of its slab are in use gives its
 * memory back with {@code MADV_DONTNEED} and reads as zero when it is taken again, as a fresh
 * page does. The {@link PageStore} hands out ids lowest first, so a growing log fills one slab
 * after another and at most one slab is partly used.
 *
 * <p>Guarded by the page store's monitor.
 */
final class PageSlabs {
    private final int pageSize;
    private final int pagesPerSlab;
    private final NativeMemory.Block[] slabs;
    /** Pages of each slab taken and not released. */
    private final int[] taken;

    PageSlabs(int pageSize, int maxPages) {
        if (pageSize >= NativeMemory.HUGE_PAGE || NativeMemory.HUGE_PAGE % pageSize != 0) {
            throw new IllegalArgumentException("pageSize must divide a huge page, was " + pageSize);
        }
        this.pageSize = pageSize;
        this.pagesPerSlab = (int) (NativeMemory.HUGE_PAGE / pageSize);
        int count = (maxPages + pagesPerSlab - 1) / pagesPerSlab;
        this.slabs = new NativeMemory.Block[count];
        this.taken = new int[count];
    }

    /**
     * Whether a store of {@code maxPages} pages of {@code pageSize} bytes, asked to advise huge
     * pages, carves them from slabs: only pages that divide a huge page, on a platform that can
     * advise, and only a log of at least {@link #MIN_SLABS} slabs, so that the one partly used
     * slab (faulted in whole) is at most ~1.5% of it.
     */
    static boolean worthIt(int pageSize, int maxPages) {
        return pageSize < NativeMemory.HUGE_PAGE
                && NativeMemory.HUGE_PAGE % pageSize == 0
                && (long) maxPages * pageSize >= MIN_SLABS * NativeMemory.HUGE_PAGE
                && HugePageMapping.supported();
    }

    /** Slabs a log must span to be carved: 128 MiB. */
    static final long MIN_SLABS = 64;

    /** The memory of page {@code id}, zeroed; maps its slab if it is the slab's first. */
    MemorySegment take(int id) {
        int slab = id / pagesPerSlab;
        if (slabs[slab] == null) {
            slabs[slab] = NativeMemory.allocate(NativeMemory.HUGE_PAGE, true);
        }
        taken[slab]++;
        return slabs[slab].segment().asSlice((long) (id % pagesPerSlab) * pageSize, pageSize);
    }

    /**
     * Gives page {@code id}'s memory back: its slab is unmapped if no other page of it is in
     * use (later accesses through {@code page} then throw), else the page's memory is discarded.
     */
    void release(int id, MemorySegment page) {
        int slab = id / pagesPerSlab;
        if (--taken[slab] == 0) {
            NativeMemory.Block block = slabs[slab];
            slabs[slab] = null;
            block.free();
        } else if (!HugePageMapping.discard(page)) {
            page.fill((byte) 0); // still held, but a page taken again must read as zero
        }
    }

    /** Unmaps every slab; the cache is closing. */
    void freeAll() {
        for (int slab = 0; slab < slabs.length; slab++) {
            if (slabs[slab] != null) {
                slabs[slab].free();
                slabs[slab] = null;
                taken[slab] = 0;
            }
        }
    }

    /** Slabs mapped now (for tests). */
    int mappedSlabs() {
        int n = 0;
        for (NativeMemory.Block slab : slabs) {
            n += slab != null ? 1 : 0;
        }
        return n;
    }
}
