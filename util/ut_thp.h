/* ut_thp: transparent huge pages for the heap of a batch run (check, fix, report, verify).
 *
 * A cold run touches hundreds of megabytes of fresh heap (tree-sitter's trees, the node index, the findings): on
 * 4 KiB pages that is one page fault per page (44,000 for a 1 MB file dense with findings, a third of its time on
 * a virtual machine) and a TLB miss per page touched. Where the kernel gives huge pages on request
 * (/sys/kernel/mm/transparent_hugepage/enabled is `madvise`, Debian's default, or `always`), ut_thp_init makes
 * glibc's heap grow in large steps and asks for huge pages on each new stretch of it, as glibc's own
 * `glibc.malloc.hugetlb=1` tunable does (which a program cannot set for itself once started):
 *   - the main arena: each allocation through ut_mem (and tree-sitter's, routed there) compares the break with
 *     the end advised so far and advises the new stretch;
 *   - a thread's arena: its heaps are 64 MiB regions aligned to 64 MiB (glibc's HEAP_MAX_SIZE), each advised once;
 *   - a block glibc maps on its own (at least M_MMAP_THRESHOLD bytes) is advised as it is returned.
 * Advice changes no result, only how memory is backed. Off where another allocator stands in for glibc's (ASan,
 * valgrind, a preloaded one: the malloc called is not libc's, or a test block does not land in glibc's main arena),
 * where the kernel gives no huge pages, and with XPUIFY_NO_THP=1
 * (to compare). The language server does not call it: a long-lived process should give memory back. */
#ifndef UT_THP_H
#define UT_THP_H
#include <stddef.h>

/* Once, in the main thread, before any other thread starts. */
void ut_thp_init(void);

/* An allocation of n bytes at p was made (p not NULL); cheap when nothing is to be advised. */
extern int ut_thp_on;
void ut_thp_note_slow(void *p, size_t n);
static inline void ut_thp_note(void *p, size_t n) {
    if (ut_thp_on) ut_thp_note_slow(p, n);
}
#endif
