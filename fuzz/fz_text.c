/* fz_text: libFuzzer target for the text front end (shell, Dockerfiles, YAML/TOML/INI, requirements, CMake, Make).
 * Input: one byte choosing the file name (and so the masker and the rules whose `files` globs take it), then the
 * file. Properties: no crash, leak or undefined behaviour (ASan found a read before the buffer in the Dockerfile
 * masker within minutes); the masked copy keeps the length and every line end, and blanks only comments, whose
 * ranges lie inside the file, ascend and do not overlap; every finding lies inside the file. */
#include "analyzer/text/an_text.h"
#include "fuzz/fz_common.h"

static const char *const paths[] = {
    "Dockerfile", "docker/Containerfile.gpu", "run.sh", ".github/workflows/ci.yml", "pyproject.toml", "setup.cfg",
    "requirements.txt", "requirements-gpu.txt", "CMakeLists.txt", "cuda.cmake", "Makefile", "build.mk", "notes.txt",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const char *path = paths[data[0] % (sizeof paths / sizeof *paths)];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    if (!fz_loadable(data + 1, len)) return 0;

    an_text_ranges comments = {0};
    an_text_kind kind = an_text_kind_for_path(path);
    char *m = an_text_mask(kind, text, len, &comments);
    FZ_ASSERT(m, "no masked copy for %s", path);
    for (size_t i = 0; i < len; i++) {
        FZ_ASSERT((text[i] == '\n') == (m[i] == '\n'), "%s: a line end moved at byte %zu", path, i);
        FZ_ASSERT(m[i] == text[i] || m[i] == ' ', "%s: byte %zu changed to something but a space", path, i);
    }
    uint32_t prev = 0;
    for (size_t i = 0; i < comments.len; i++) {
        an_text_range r = comments.items[i];
        FZ_ASSERT(r.start <= r.end && r.end <= len, "%s: comment %zu [%u, %u) outside the file", path, i, r.start, r.end);
        FZ_ASSERT(r.start >= prev, "%s: comment %zu starts before the end of the one before it", path, i);
        prev = r.end;
    }
    for (size_t i = 0; i < len; i++)
        if (m[i] != text[i]) {
            bool inside = false;
            for (size_t c = 0; c < comments.len && !inside; c++) inside = comments.items[c].start <= i && i < comments.items[c].end;
            FZ_ASSERT(inside, "%s: byte %zu blanked outside every comment", path, i);
        }
    ut_free(m);
    ut_vec_free(&comments);

    const an_catalog *cat = fz_builtin_catalog();
    an_source src;
    an_source_init_mem(&src, path, text, len);
    an_diag_list diags = {0};
    char *why = NULL; /* a rule error (PCRE2's match limit) is a legitimate outcome, not a crash */
    an_text_analyze(cat, &src, NULL, &diags, &why);
    ut_free(why);
    fz_check_diags(cat, &src, &diags);
    an_diag_list_free(&diags);
    an_source_free(&src);
    return 0;
}
