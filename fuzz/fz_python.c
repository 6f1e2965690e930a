/* fz_python: libFuzzer target for the Python front end, the rule engine and the fixer.
 * Input: one option byte (fix target, torch version, unsafe, helper import; see fz_common.h), then the file.
 * Properties: no crash, leak or undefined behaviour; every finding and edit lies inside the file, messages and edit
 * texts are UTF-8; each fix applied alone, and the fixer's whole fixpoint, give text that parses whenever the
 * input parsed; the fixer converges; fixing its own output changes nothing; a CRLF file stays CRLF. */
#include "rewriters/rw_apply.h"
#include "rewriters/rw_fixer.h"
#include "fuzz/fz_common.h"

/* every LF is part of a CRLF, and there is at least one */
static bool crlf_only(const char *t, size_t n) {
    bool any = false;
    for (size_t i = 0; i < n; i++)
        if (t[i] == '\n') {
            if (!i || t[i - 1] != '\r') return false;
            any = true;
        }
    return any;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const an_catalog *cat = fz_builtin_catalog();
    an_fix_options fo;
    bool unsafe;
    fz_fix_options(data[0], &fo, &unsafe);
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    if (!fz_loadable(data + 1, len)) return 0;
    an_source src;
    an_source_init_mem(&src, "fuzz.py", text, len);
    bool parsed = an_engine_parses(AN_LANG_PYTHON, src.path, src.text, src.len);

    /* what `check` computes: findings with their fixes */
    an_diag_list diags = {0};
    an_engine_analyze_source(cat, AN_LANG_PYTHON, &src, NULL, &fo, &diags);
    fz_check_diags(cat, &src, &diags);
    if (parsed) {
        /* one fix at a time, as an editor's code action applies it */
        for (size_t i = 0; i < diags.len; i++) {
            const an_fix *f = diags.items[i].fix;
            if (!f || !f->edits.len) continue;
            size_t n;
            char *t = an_edits_apply(src.text, src.len, f->edits.items, f->edits.len, &n);
            FZ_ASSERT(an_engine_parses(AN_LANG_PYTHON, src.path, t, n),
                      "the %s fix alone breaks the syntax; fixed text:\n%s", diags.items[i].rule->code, t);
            ut_free(t);
        }
    }
    an_diag_list_free(&diags);

    /* what `fix` does: the fixpoint */
    rw_file_fix ff;
    rw_fix_source(cat, AN_LANG_PYTHON, &src, NULL, &fo, unsafe, &ff);
    FZ_ASSERT(!ff.error, "%s", ff.error);
    if (ff.text) {
        if (crlf_only(text, len))
            FZ_ASSERT(crlf_only(ff.text, ff.len), "a CRLF file got bare LF line ends from the fixer:\n%s", ff.text);
        if (parsed)
            FZ_ASSERT(an_engine_parses(AN_LANG_PYTHON, src.path, ff.text, ff.len), "fixed text does not parse:\n%s",
                      ff.text);
        an_source again;
        an_source_init_mem(&again, src.path, ff.text, ff.len);
        rw_file_fix ff2;
        rw_fix_source(cat, AN_LANG_PYTHON, &again, NULL, &fo, unsafe, &ff2);
        FZ_ASSERT(!ff2.error && !ff2.text, "fixing the fixed text changes it again (%s)", ff2.error ? ff2.error : "");
        rw_file_fix_free(&ff2);
        an_source_free(&again);
    }
    rw_file_fix_free(&ff);
    an_source_free(&src);
    return 0;
}
