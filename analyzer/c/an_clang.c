/* an_clang: dlopen of libclang-14 and its function table. Linking -lclang would add ~40 ms of dynamic loading to
 * every run, Python-only ones included; loading it here costs that only when a C file passes the prefilter. */
#include "analyzer/c/an_clang.h"
#include "util/ut_mem.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static an_clang_api api;
const an_clang_api *an_cl;
static const char *load_error;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* the Debian libclang-14 paths first, then newer LLVMs' (the C API is stable; Ubuntu 24.04 ships 16-18): the resource
 * directory (builtin headers, CUDA wrappers) is found relative to the library, so the llvm-N path comes before the
 * bare soname; XPUIFY_LIBCLANG names the one library to use instead */
static const char *const cands[] = {"/usr/lib/llvm-14/lib/libclang.so.1", "libclang-14.so.1", "libclang-14.so.13",
                                    "/usr/lib/llvm-15/lib/libclang.so.1", "/usr/lib/llvm-16/lib/libclang.so.1",
                                    "/usr/lib/llvm-17/lib/libclang.so.1", "/usr/lib/llvm-18/lib/libclang.so.1",
                                    "/usr/lib/llvm-19/lib/libclang.so.1", "libclang.so.1", "libclang.so"};

static void load(void) {
    const char *forced = getenv("XPUIFY_LIBCLANG");
    void *h = NULL;
    if (forced && *forced) h = dlopen(forced, RTLD_NOW | RTLD_LOCAL);
    else
        for (size_t i = 0; i < sizeof cands / sizeof *cands && !h; i++) h = dlopen(cands[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        load_error = forced && *forced ? "libclang cannot be loaded from $XPUIFY_LIBCLANG"
                                       : "libclang (Debian package libclang1-14, or LLVM 15-19) cannot be loaded";
        return;
    }
#define AN_CLANG_RESOLVE(f)                                                                                       \
    if (!(api.f = (__typeof__(f) *)dlsym(h, #f))) {                                                             \
        load_error = "libclang lacks " #f " (libclang 14 or newer is needed)";                                  \
        return;                                                                                                   \
    }
    AN_CLANG_FUNCTIONS(AN_CLANG_RESOLVE)
#undef AN_CLANG_RESOLVE
    an_cl = &api;
}

const an_clang_api *an_clang_load(const char **why) {
    pthread_once(&once, load);
    if (why) *why = load_error;
    return an_cl;
}

char *an_clang_take(CXString s) {
    const char *c = CL(clang_getCString)(s);
    char *r = ut_strdup(c ? c : "");
    CL(clang_disposeString)(s);
    return r;
}

/* The library load() takes, by its file's identity where stat can tell it (an absolute path: the first candidate that
 * exists is the one dlopen opens), else by the version the loaded library reports. Cached C results are keyed on
 * it: the findings of fast mode depend on the file's text, the rules and the parser, and a different libclang (an
 * upgrade in place changes the file's size, times or inode) must not be served another's results. */
static char identity[600];
static pthread_once_t identity_once = PTHREAD_ONCE_INIT;

static bool stat_identity(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return false;
    snprintf(identity, sizeof identity, "%s %llu %llu %lld.%09ld %lld.%09ld", path, (unsigned long long)st.st_ino,
             (unsigned long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
             (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
    return true;
}

static void find_identity(void) {
    const char *forced = getenv("XPUIFY_LIBCLANG");
    if (forced && *forced) {
        if (strchr(forced, '/') && stat_identity(forced)) return;
    } else {
        for (size_t i = 0; i < sizeof cands / sizeof *cands; i++) {
            if (cands[i][0] != '/') break; /* a soname: the dynamic linker decides; ask the library itself */
            if (stat_identity(cands[i])) return;
        }
    }
    if (an_clang_load(NULL)) {
        char *v = an_clang_take(CL(clang_getClangVersion)());
        snprintf(identity, sizeof identity, "loaded %s", v);
        ut_free(v);
    } else {
        snprintf(identity, sizeof identity, "none");
    }
}

const char *an_clang_identity(void) {
    pthread_once(&identity_once, find_identity);
    return identity;
}
