/* rw_fixer: the fixpoint loop with re-parse safety. */
#include "rewriters/rw_fixer.h"
#include "rewriters/rw_apply.h"
#include <stdio.h>

typedef struct {
    rw_file_fix *out;
    UT_VEC(const an_rule *) pass_rules;
} pass_ctx;

static void on_applied(void *vc, const an_diag *d) {
    pass_ctx *c = vc;
    ut_vec_push(&c->pass_rules, d->rule);
}

static int count_lines(const char *t, size_t n) {
    int k = 0;
    for (size_t i = 0; i < n; i++) k += t[i] == '\n';
    return k;
}

/* C/C++/CUDA: when every syntax error of the fixed text sits on a line that already had an error of any kind
 * (an undeclared name that a fix turns into a declaration: `rEturn !t.is_cuda()` -> `rEturn t.is_cpu()`), returns
 * the first such line of the original: the fix met broken code, not a bug of its own. Lines the fixes added (a
 * portable-layer include) shift what follows, so a line matches itself or itself less that shift. 0 otherwise. */
static int line_already_broken(const an_catalog *cat, const an_source *src, const char *text, size_t len) {
    an_c_lines before = {0}, after = {0};
    an_engine_c_error_lines(cat, src->path, src->text, src->len, NULL, &before);
    an_engine_c_error_lines(cat, src->path, text, len, &after, NULL);
    int shift = count_lines(text, len) - count_lines(src->text, src->len), first = 0;
    bool all = after.len > 0;
    for (size_t i = 0; i < after.len && all; i++) {
        bool found = false;
        for (size_t j = 0; j < before.len && !found; j++)
            if (before.items[j] == after.items[i] || before.items[j] == after.items[i] - shift) {
                found = true;
                if (!first) first = before.items[j];
            }
        all = found;
    }
    ut_free(before.items);
    ut_free(after.items);
    return all ? first : 0;
}

static char *rule_list(const pass_ctx *c) {
    ut_buf b;
    ut_buf_init(&b);
    for (size_t i = 0; i < c->pass_rules.len; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++) seen = c->pass_rules.items[j] == c->pass_rules.items[i];
        if (seen) continue;
        ut_buf_printf(&b, "%s%s (%s)", b.len ? ", " : "", c->pass_rules.items[i]->code, c->pass_rules.items[i]->name);
    }
    return ut_buf_take(&b);
}

void rw_fix_source(const an_catalog *cat, an_lang lang, const an_source *src, const bool *enabled,
                   const an_fix_options *fix, bool unsafe, rw_file_fix *out) {
    memset(out, 0, sizeof *out);
    an_fix_options opt = *fix;
    opt.unsafe = unsafe;
    char *cur = ut_strndup(src->text, src->len);
    size_t len = src->len;
    int parsed_before = -1; /* whether the original parses without error: asked once a pass changes the text */
    /* C/C++/CUDA: libclang's syntax errors before the edits; a pass may not add any */
    int c_errors_before = lang == AN_LANG_C ? an_engine_c_parse_errors(cat, src->path, src->text, src->len) : -1;
    pass_ctx pc = {out, {0}};
    bool converged = false;
    for (int pass = 1; pass <= RW_MAX_PASSES; pass++) {
        an_source s;
        an_source_init_mem(&s, src->path, cur, len);
        an_diag_list diags = {0};
        an_engine_analyze_source_ex(cat, lang, &s, enabled, &opt, !opt.whole_files, &diags); /* by regions, as check */
        rw_pass p;
        pc.pass_rules.len = 0;
        rw_apply_pass(cur, len, &diags, unsafe, &p, on_applied, &pc);
        an_diag_list_free(&diags);
        an_source_free(&s);
        if (!p.applied || (p.len == len && !memcmp(p.text, cur, len))) {
            ut_free(p.text);
            converged = true;
            break;
        }
        if (parsed_before < 0) parsed_before = an_engine_parses(lang, src->path, src->text, src->len);
        if ((parsed_before && !an_engine_parses(lang, src->path, p.text, p.len)) ||
            (c_errors_before >= 0 && an_engine_c_parse_errors(cat, src->path, p.text, p.len) > c_errors_before)) {
            char *rules = rule_list(&pc);
            ut_buf b;
            ut_buf_init(&b);
            /* a file that already has syntax errors: its code around them is not what the fixes were written for
             * (libclang's recovery reads `d,n.is_cuda()` at file scope as declarators); said as such, not as a bug */
            int broken_line = c_errors_before == 0 ? line_already_broken(cat, src, p.text, p.len) : 0;
            if (c_errors_before > 0)
                ut_buf_printf(&b, "a fix introduced a syntax error (pass %d, rules %s) into a file that already has %d; "
                                  "file left untouched: correct those first", pass, rules, c_errors_before);
            else if (broken_line > 0)
                ut_buf_printf(&b, "a fix introduced a syntax error (pass %d, rules %s) into a file that already has an "
                                  "error on that line (line %d); file left untouched: correct it first", pass, rules,
                              broken_line);
            else
                ut_buf_printf(&b, "a fix introduced a syntax error (pass %d, rules %s); file left untouched: this is a bug in xpuify, please report it", pass, rules);
            out->error = ut_buf_take(&b);
            ut_free(rules);
            ut_free(p.text);
            goto fail;
        }
        out->fixed += p.applied;
        for (size_t i = 0; i < pc.pass_rules.len; i++) ut_vec_push(&out->rules, pc.pass_rules.items[i]);
        out->passes = pass;
        ut_free(cur);
        cur = p.text;
        len = p.len;
    }
    if (!converged) {
        char *rules = rule_list(&pc);
        ut_buf b;
        ut_buf_init(&b);
        ut_buf_printf(&b, "fixes did not converge after %d passes (last pass: %s); file left untouched: this is a bug in xpuify, please report it",
                      RW_MAX_PASSES, rules);
        out->error = ut_buf_take(&b);
        ut_free(rules);
        goto fail;
    }
    ut_vec_free(&pc.pass_rules);
    if (len == src->len && !memcmp(cur, src->text, len)) {
        ut_free(cur);
        return;
    }
    out->text = cur;
    out->len = len;
    return;
fail:
    ut_vec_free(&pc.pass_rules);
    ut_free(cur);
    out->fixed = 0;
    out->rules.len = 0;
}

void rw_file_fix_free(rw_file_fix *f) {
    ut_free(f->text);
    ut_free(f->error);
    ut_vec_free(&f->rules);
    memset(f, 0, sizeof *f);
}
