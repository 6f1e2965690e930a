/* fz_c: libFuzzer target for the C/C++/CUDA front end (libclang, fast mode: what `check` and `fix` use without a
 * compile database) and the C fixer.
 * Input: a language byte (low 3 bits: the file name's extension, .c .cpp .cu .h .cuh .hpp .cc .cxx; bit 3: fixes
 * off, findings only; bit 4: a relative include path for the portable layers), a fix option byte (fz_common.h),
 * then the file.
 * Properties: no crash, leak or undefined behaviour; every finding and edit lies inside the file, messages and edit
 * texts are UTF-8, findings sorted; the fixer does not give up (fixes that do not converge, or a fix that adds a
 * libclang syntax error to a file without any, are bugs it reports as such; in a file that has syntax errors of its
 * own a refused fix is said to be the file's); its output has no more libclang syntax errors than the input;
 * fixing its output changes nothing. */
#include "analyzer/c/an_clang.h"
#include "rewriters/rw_fixer.h"
#include "fuzz/fz_common.h"

static const char *const names[8] = {"fuzz.c", "fuzz.cpp", "fuzz.cu", "fuzz.h",
                                     "fuzz.cuh", "fuzz.hpp", "fuzz.cc", "src/fuzz.cxx"};

/* without libclang every input would be skipped and the target would fuzz nothing: say so at once */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    const char *why = NULL;
    if (!an_clang_load(&why)) {
        fprintf(stderr, "fz_c: %s\n", why ? why : "libclang cannot be loaded");
        abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    const an_catalog *cat = fz_builtin_catalog();
    const char *path = names[data[0] & 7];
    bool fix = !(data[0] & 8);
    an_fix_options fo;
    bool unsafe;
    fz_fix_options(data[1], &fo, &unsafe);
    if (data[0] & 16) fo.c_gpu_include = "../include/xpuify_gpu.h", fo.c_ccl_include = "../include/xpuify_ccl.h";
    if (!fix) fo.target = AN_TARGET_NONE;
    const char *text = (const char *)data + 2;
    size_t len = size - 2;
    if (!fz_loadable(data + 2, len)) return 0;
    an_source src;
    an_source_init_mem(&src, path, text, len);

    /* what `check` computes: findings (with their fixes unless off) */
    an_diag_list diags = {0};
    an_engine_analyze_source(cat, AN_LANG_C, &src, NULL, &fo, &diags);
    fz_check_diags(cat, &src, &diags);
    an_diag_list_free(&diags);

    /* what `fix` does: the fixpoint, with libclang's syntax check before and after every pass */
    if (fix) {
        rw_file_fix ff;
        rw_fix_source(cat, AN_LANG_C, &src, NULL, &fo, unsafe, &ff);
        /* a file with syntax errors of its own may see a fix refused (said as such); any other refusal is a bug */
        FZ_ASSERT(!ff.error || (strstr(ff.error, "into a file that already has") && !strstr(ff.error, "a bug in xpuify")),
                  "%s", ff.error);
        if (ff.text) {
            int before = an_engine_c_parse_errors(cat, path, text, len);
            int after = an_engine_c_parse_errors(cat, path, ff.text, ff.len);
            FZ_ASSERT(before >= 0 && after >= 0, "libclang cannot be used (%d, %d)", before, after);
            FZ_ASSERT(after <= before, "%d syntax errors before the fixes, %d after; fixed text:\n%s", before, after,
                      ff.text);
            an_source again;
            an_source_init_mem(&again, path, ff.text, ff.len);
            rw_file_fix ff2;
            rw_fix_source(cat, AN_LANG_C, &again, NULL, &fo, unsafe, &ff2);
            FZ_ASSERT(!ff2.error && !ff2.text, "fixing the fixed text changes it again (%s):\n%s",
                      ff2.error ? ff2.error : "", ff2.text ? ff2.text : "");
            rw_file_fix_free(&ff2);
            an_source_free(&again);
        }
        rw_file_fix_free(&ff);
    }
    an_source_free(&src);
    return 0;
}
