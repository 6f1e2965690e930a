/* Unit tests for util/ut_thp: with the kernel's huge pages on request (`madvise`), ut_thp_init turns advice on and
 * every kind of heap memory an allocation through ut_mem lands in is advised: the main arena's new stretches
 * (many small blocks), a block glibc maps on its own, and a thread arena's heap. The kernel's own account is read
 * back: the `hg` flag of the mapping in /proc/self/smaps. XPUIFY_NO_THP=1 leaves it off (a child process, before
 * the parent turns it on); a sanitizer build leaves it off (ASan's allocator is not glibc's). Skipped where the
 * kernel gives no huge pages or does so unasked (`always`: nothing to advise). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "util/ut_mem.h"
#include "util/ut_thp.h"
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

/* the kernel's mode: 'm' madvise, 'a' always, 'n' never or unknown */
static char thp_mode(void) {
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f) return 'n';
    char b[128] = {0};
    size_t n = fread(b, 1, sizeof b - 1, f);
    fclose(f);
    b[n] = 0;
    return strstr(b, "[madvise]") ? 'm' : strstr(b, "[always]") ? 'a' : 'n';
}

/* 1 when the mapping holding p carries the huge-page advice (VmFlags `hg`), 0 when not, -1 when not found */
static int advised(const void *p) {
    FILE *f = fopen("/proc/self/smaps", "r");
    assert_non_null(f);
    char line[512];
    int in = 0, r = -1;
    uintptr_t a = (uintptr_t)p;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = a >= lo && a < hi;
            continue;
        }
        if (in && !strncmp(line, "VmFlags:", 8)) {
            r = strstr(line, " hg") != NULL;
            break;
        }
    }
    fclose(f);
    return r;
}

static void *thread_alloc(void *arg) {
    /* a thread's first allocations come from an arena of its own (glibc makes one per thread, up to 8 per core) */
    void **keep = ut_malloc(1000 * sizeof *keep);
    for (int i = 0; i < 1000; i++) keep[i] = ut_malloc(3000);
    memset(keep[999], 1, 3000);
    *(int *)arg = advised(keep[999]);
    for (int i = 0; i < 1000; i++) ut_free(keep[i]);
    ut_free(keep);
    return NULL;
}

static void off_when_asked(void **s) {
    (void)s;
    if (thp_mode() != 'm') skip();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (!pid) {
        setenv("XPUIFY_NO_THP", "1", 1);
        ut_thp_init();
        _exit(ut_thp_on == 0 ? 0 : 1);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void heap_is_advised(void **s) {
    (void)s;
    char mode = thp_mode();
    ut_thp_init();
#ifdef SANITIZED
    assert_int_equal(ut_thp_on, 0);
    skip();
#endif
    if (mode != 'm') {
        assert_int_equal(ut_thp_on, 0);
        skip();
    }
    assert_int_equal(ut_thp_on, 1);
    /* the main arena: 128 MB of small blocks makes it grow past the break it had */
    enum { N = 32768 };
    void **keep = ut_malloc(N * sizeof *keep);
    for (int i = 0; i < N; i++) keep[i] = ut_malloc(4000);
    memset(keep[N - 1], 1, 4000);
    assert_int_equal(advised(keep[N - 1]), 1);
    assert_int_equal(advised(keep[N / 2]), 1);
    /* a block of its own mapping, and one grown by realloc */
    char *big = ut_malloc(8u << 20);
    memset(big, 1, 8u << 20);
    assert_int_equal(advised(big + (4u << 20)), 1);
    big = ut_realloc(big, 32u << 20);
    assert_int_equal(advised(big + (30u << 20)), 1);
    ut_free(big);
    /* a thread's arena */
    int in_thread = -2;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, thread_alloc, &in_thread), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(in_thread, 1);
    for (int i = 0; i < N; i++) ut_free(keep[i]);
    ut_free(keep);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(off_when_asked),
        cmocka_unit_test(heap_is_advised),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
