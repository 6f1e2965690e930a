/* an_clang: dlopen of libclang-14 and its function table. Linking -lclang would add ~40 ms of dynamic loading to
 * every run, Python-only ones included; loading it here costs that only when a C file passes the prefilter. */
#include "analyzer/c/an_clang.h"
#include "util/ut_mem.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static an_clang_api api;
const an_clang_api *an_cl;
static const char *load_error;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    /* the Debian libclang-14 paths first, then newer LLVMs' (the C API is stable; Ubuntu 24.04 ships 16-18): the
     * resource directory (builtin headers, CUDA wrappers) is found relative to the library, so the llvm-N path
     * comes before the bare soname; XPUIFY_LIBCLANG names the one library to use instead */
    const char *forced = getenv("XPUIFY_LIBCLANG");
    const char *cands[] = {"/usr/lib/llvm-14/lib/libclang.so.1", "libclang-14.so.1", "libclang-14.so.13",
                           "/usr/lib/llvm-15/lib/libclang.so.1", "/usr/lib/llvm-16/lib/libclang.so.1",
                           "/usr/lib/llvm-17/lib/libclang.so.1", "/usr/lib/llvm-18/lib/libclang.so.1",
                           "/usr/lib/llvm-19/lib/libclang.so.1", "libclang.so.1", "libclang.so"};
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
