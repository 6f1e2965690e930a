/* an_clcompile: OpenCL C compiled by libclang in-process (see an_clcompile.h). The text is an unsaved file; the
 * driver adds OpenCL C's default header (opencl-c-base.h, from the resource directory of libclang's LLVM, package
 * libclang-common-14-dev) and the built-in functions: a missing header means the check cannot be done here, which
 * is said as such rather than taken for an error of the text. */
#include "analyzer/c/an_clcompile.h"
#include "analyzer/c/an_clang.h"
#include "util/ut_buf.h"
#include <string.h>

static const char PATH[] = "/xpuify/kernels.cl";

an_clcompile_status an_clcompile_check(const char *text, size_t len, an_clcompile_errors *out, char **why) {
    memset(out, 0, sizeof *out);
    *why = NULL;
    const char *lwhy = NULL;
    if (!an_clang_load(&lwhy)) { *why = ut_strdup(lwhy ? lwhy : "libclang cannot be loaded"); return AN_CLCOMPILE_UNAVAILABLE; }
    CXIndex idx = CL(clang_createIndex)(0, 0);
    struct CXUnsavedFile uf = {PATH, text, (unsigned long)len};
    const char *args[] = {"-x", "cl", "-cl-std=CL1.2", "-ferror-limit=0", "-w"};
    CXTranslationUnit tu = NULL;
    enum CXErrorCode ec = CL(clang_parseTranslationUnit2)(idx, PATH, args, (int)(sizeof args / sizeof *args), &uf, 1, 0, &tu);
    if (ec != CXError_Success || !tu) {
        CL(clang_disposeIndex)(idx);
        *why = ut_strdup("libclang could not run on the OpenCL C");
        return AN_CLCOMPILE_UNAVAILABLE;
    }
    CXFile main = CL(clang_getFile)(tu, PATH);
    an_clcompile_status st = AN_CLCOMPILE_OK;
    for (unsigned i = 0, n = CL(clang_getNumDiagnostics)(tu); i < n; i++) {
        CXDiagnostic d = CL(clang_getDiagnostic)(tu, i);
        if (CL(clang_getDiagnosticSeverity)(d) >= CXDiagnostic_Error) {
            CXFile f = NULL;
            unsigned off = 0;
            CL(clang_getExpansionLocation)(CL(clang_getDiagnosticLocation)(d), &f, NULL, NULL, &off);
            an_clcompile_error e = {f && f == main && off <= len, off, an_clang_take(CL(clang_getDiagnosticSpelling)(d))};
            if (!e.placed && strstr(e.msg, "opencl-c") && strstr(e.msg, "file not found")) { /* the default header */
                ut_buf b;
                ut_buf_init(&b);
                ut_buf_printf(&b, "libclang has no OpenCL C headers (%s: package libclang-common-14-dev)", e.msg);
                *why = ut_buf_take(&b);
                ut_free(e.msg);
                CL(clang_disposeDiagnostic)(d);
                st = AN_CLCOMPILE_UNAVAILABLE;
                break;
            }
            ut_vec_push(out, e);
            st = AN_CLCOMPILE_ERRORS;
        }
        CL(clang_disposeDiagnostic)(d);
    }
    CL(clang_disposeTranslationUnit)(tu);
    CL(clang_disposeIndex)(idx);
    if (st == AN_CLCOMPILE_UNAVAILABLE) an_clcompile_errors_free(out);
    return st;
}

void an_clcompile_errors_free(an_clcompile_errors *e) {
    for (size_t i = 0; i < e->len; i++) ut_free(e->items[i].msg);
    ut_vec_free(e);
}
