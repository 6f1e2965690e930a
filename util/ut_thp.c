/* ut_thp: transparent huge pages for the heap of a batch run (see ut_thp.h). */
#include "util/ut_thp.h"
#include <dlfcn.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define THP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
#define THP_SANITIZED 1
#endif
#endif

#define THP_STEP ((size_t)64 << 20)      /* the main arena grows by at least this much (M_TOP_PAD) */
#define ARENA_HEAP ((uintptr_t)64 << 20) /* glibc's HEAP_MAX_SIZE on 64-bit: a thread arena's heaps' size and alignment */
#define ARENA_SLOTS 256
/* the low bits of the size word before a glibc chunk's user memory */
#define CHUNK_MMAPPED 0x2
#define CHUNK_NON_MAIN_ARENA 0x4

int ut_thp_on;
extern char end; /* the end of the program's data: the main arena lies above it, below the break */

/* the size word glibc keeps just before a chunk's user memory (read through an integer: the compiler cannot know
 * it lies inside the allocator's chunk) */
static inline size_t chunk_head(const void *p) { return *(const size_t *)((uintptr_t)p - sizeof(size_t)); }

static uintptr_t page_mask;
static _Atomic uintptr_t heap_advised; /* the main arena is advised up to this break */
static _Atomic uintptr_t arena_heaps[ARENA_SLOTS];
static _Thread_local uintptr_t last_heap; /* the thread arena heap this thread advised or met last */

static void advise(uintptr_t from, uintptr_t to) {
    from &= ~page_mask;
    to = (to + page_mask) & ~page_mask;
    if (to > from) (void)madvise((void *)from, to - from, MADV_HUGEPAGE);
}

/* true when base is new to the table (and now in it) */
static int heap_first_seen(uintptr_t base) {
    uintptr_t h = (base / ARENA_HEAP) % ARENA_SLOTS;
    for (unsigned i = 0; i < ARENA_SLOTS; i++) {
        _Atomic uintptr_t *slot = &arena_heaps[(h + i) % ARENA_SLOTS];
        uintptr_t cur = atomic_load_explicit(slot, memory_order_relaxed);
        if (cur == base) return 0;
        if (!cur) {
            if (atomic_compare_exchange_strong(slot, &cur, base)) return 1;
            if (cur == base) return 0;
        }
    }
    return 1; /* a full table: advising again is harmless */
}

void ut_thp_note_slow(void *p, size_t n) {
    uintptr_t a = (uintptr_t)p;
    size_t head = chunk_head(p);
    if (head & CHUNK_MMAPPED) { /* a block of its own mapping */
        advise(a, a + n);
        return;
    }
    if (head & CHUNK_NON_MAIN_ARENA) {
        uintptr_t base = a & ~(ARENA_HEAP - 1);
        if (base == last_heap) return;
        last_heap = base;
        if (heap_first_seen(base)) advise(base, base + ARENA_HEAP);
        return;
    }
    /* the main arena: advise what the break gained since; after a trim (the break went down, and the stretch
     * given back loses its advice) start again from there */
    uintptr_t brk = (uintptr_t)sbrk(0);
    uintptr_t done = atomic_load_explicit(&heap_advised, memory_order_relaxed);
    if (brk != done && atomic_compare_exchange_strong(&heap_advised, &done, brk) && brk > done) advise(done, brk);
}

void ut_thp_init(void) {
#ifndef THP_SANITIZED
    const char *off = getenv("XPUIFY_NO_THP");
    if (off && *off && strcmp(off, "0")) return;
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f) return;
    char mode[128] = {0};
    size_t got = fread(mode, 1, sizeof mode - 1, f);
    fclose(f);
    mode[got] = 0;
    int always = strstr(mode, "[always]") != NULL, madv = strstr(mode, "[madvise]") != NULL;
    if (!always && !madv) return;
    /* glibc's allocator must be the one in use: the malloc this program calls is libc's own (not an interposed
     * one: ASan's, valgrind's, a preloaded allocator's), and a small block lands in the main arena, above the
     * program's data and below the break, with a glibc size word before it */
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    bool own = libc && dlsym(libc, "malloc") == dlsym(RTLD_DEFAULT, "malloc");
    if (libc) dlclose(libc);
    if (!own) return;
    void *t = malloc(64);
    uintptr_t brk = (uintptr_t)sbrk(0);
    int glibc = t && (uintptr_t)t >= (uintptr_t)&end && (uintptr_t)t < brk && !(chunk_head(t) & (CHUNK_MMAPPED | CHUNK_NON_MAIN_ARENA));
    free(t);
    if (!glibc) return;
    /* grow in large steps, so that whole huge pages fit in each new stretch (trimming keeps this much too) */
    mallopt(M_TOP_PAD, (int)THP_STEP);
    if (always) return; /* the kernel backs aligned stretches with huge pages unasked */
    page_mask = (uintptr_t)sysconf(_SC_PAGESIZE) - 1;
    atomic_store(&heap_advised, brk);
    ut_thp_on = 1;
#endif
}
