/* Unit tests for an_incr: over random edit sequences (typing, deleting, pasting statements, imports and
 * suppression comments) on the labelled fixtures and a long synthetic module, the incremental analysis must
 * give exactly what a full analysis of the same tree gives, and, once settled, what a fresh analysis of the
 * same text gives: findings, positions, messages and fixes. The test also checks that region re-analysis really
 * happens (most typing edits) and that it covers little text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "tests/unit/unit_files.h"
#include "analyzer/core/an_engine.h"
#include "analyzer/core/an_incr.h"
#include "analyzer/python/an_python.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static an_catalog *cat;
static an_python *py;
static int steps = 12; /* analyses per fixture file and target */

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(uint32_t n) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return n ? (uint32_t)(rng % n) : 0;
}

/* Every field a consumer sees. */
static void same(const an_diag_list *a, const an_diag_list *b, const char *text, int step) {
    if (a->len != b->len) {
        fprintf(stderr, "step %d: %zu findings incrementally, %zu fresh\n--- text\n%s\n", step, a->len, b->len, text);
        for (size_t i = 0; i < a->len; i++) fprintf(stderr, " inc %s %u-%u\n", a->items[i].rule->code, a->items[i].start, a->items[i].end);
        for (size_t i = 0; i < b->len; i++) fprintf(stderr, " new %s %u-%u\n", b->items[i].rule->code, b->items[i].start, b->items[i].end);
    }
    assert_int_equal(a->len, b->len);
    for (size_t i = 0; i < a->len; i++) {
        const an_diag *x = &a->items[i], *y = &b->items[i];
        if (x->rule != y->rule || x->start != y->start || x->end != y->end)
            fprintf(stderr, "step %d: finding %zu: %s %u-%u incrementally, %s %u-%u fresh\n", step, i, x->rule->code,
                    x->start, x->end, y->rule->code, y->start, y->end);
        assert_ptr_equal(x->rule, y->rule);
        assert_int_equal(x->start, y->start);
        assert_int_equal(x->end, y->end);
        assert_int_equal(x->line, y->line);
        assert_int_equal(x->col, y->col);
        assert_int_equal(x->end_line, y->end_line);
        assert_int_equal(x->end_col, y->end_col);
        assert_string_equal(x->message, y->message);
        if (!x->fix != !y->fix)
            fprintf(stderr, "step %d: %s at %u: fix %s incrementally, %s fresh\n--- text\n%s\n", step, x->rule->code,
                    x->start, x->fix ? "present" : "absent", y->fix ? "present" : "absent", text);
        assert_int_equal(!x->fix, !y->fix);
        if (!x->fix) continue;
        if (strcmp(x->fix->title, y->fix->title)) fprintf(stderr, "step %d: %s at %u: titles differ\n--- text\n%s\n", step, x->rule->code, x->start, text);
        assert_string_equal(x->fix->title, y->fix->title);
        assert_int_equal(x->fix->applicability, y->fix->applicability);
        if (x->fix->edits.len != y->fix->edits.len)
            fprintf(stderr, "step %d: %s at %u: %zu edits incrementally, %zu fresh\n", step, x->rule->code, x->start,
                    x->fix->edits.len, y->fix->edits.len);
        assert_int_equal(x->fix->edits.len, y->fix->edits.len);
        for (size_t k = 0; k < x->fix->edits.len; k++) {
            const an_edit *e = &x->fix->edits.items[k], *f = &y->fix->edits.items[k];
            if (e->start != f->start || strcmp(e->text, f->text))
                fprintf(stderr, "step %d: %s at %u: edit %zu: %u-%u \"%s\" incrementally, %u-%u \"%s\" fresh\n", step,
                        x->rule->code, x->start, k, e->start, e->end, e->text, f->start, f->end, f->text);
            assert_int_equal(e->start, f->start);
            assert_int_equal(e->end, f->end);
            assert_string_equal(e->text, f->text);
        }
    }
}

/* Snippets an editor session produces: typing CUDA calls, statements, blocks, imports, suppressions, breakage. */
static const char *const snippets[] = {
    "torch.cuda.synchronize()\n", "x = t.cuda()\n", "y = torch.zeros(2, device=\"cuda\")\n", "\n", "    ", "(", ")",
    ":", "torch.cuda.", "empty_cache()", "\"cuda\"", "import torch.cuda as tc\n", "tc.synchronize()\n",
    "  # xpuify: ignore[XPU202]", "# xpuify: disable[XPU101]\n", "# xpuify: enable[XPU101]\n", "\n    ", "  ",
    "\n\n",
    "if DEV == \"cuda\":\n    torch.cuda.ipc_collect()\n", "def f(torch):\n    return torch.cuda.is_available()\n",
    "class M:\n    def g(self):\n        return self.cuda()\n", "\"\"\"", "DEVICE_TYPE = 1\n",
    "dist.init_process_group(backend=\"nccl\")\n", "with torch.cuda.amp.autocast():\n    pass\n", "é", "𝔁",
    "if torch.xpu.is_available():\n    torch.cuda.synchronize()\n", "from torch.cuda.amp import GradScaler\n",
};

static void edit(an_incr *inc, char **text, size_t *len, uint32_t start, uint32_t old_end, const char *ins,
                 size_t ins_len) {
    an_incr_edit(inc, *text, (uint32_t)*len, start, old_end, ins, (uint32_t)ins_len);
    char *t = malloc(*len - (old_end - start) + ins_len + 1);
    memcpy(t, *text, start);
    memcpy(t + start, ins, ins_len);
    memcpy(t + start + ins_len, *text + old_end, *len - old_end);
    *len = *len - (old_end - start) + ins_len;
    t[*len] = 0;
    free(*text);
    *text = t;
}

/* A position on a character boundary */
static uint32_t pos(const char *t, size_t len) {
    uint32_t p = rnd((uint32_t)len + 1);
    while (p < len && ((unsigned char)t[p] & 0xC0) == 0x80) p++;
    return p;
}

typedef struct {
    int analyses, regions, unchanged;
    uint64_t region_bytes, text_bytes;
} tally;

/* Someone typing statements into function bodies one keystroke at a time: Enter at the end of a line, the
 * statement (indentation included), then erasing it and the line again, or keeping it. */
static const char *const typed[] = {
    "    torch.cuda.synchronize()", "    z = y.cuda()", "    print(y, \"é\")",
    "    w = torch.zeros(1, device=\"cuda\")", "    if y:\n        torch.cuda.empty_cache()",
    "    k = torch.cuda.device_count() + len(x)", "    ", "",
    "    def inner(torch):\n        return torch.cuda.is_available()", "    f = lambda torch: torch.cuda.synchronize()",
    "    use_cuda = torch.cuda.is_available()\n    dev = \"cuda\" if use_cuda else \"cpu\"",
};

typedef struct {
    const char *snippet;
    uint32_t at, done; /* where it goes (after the new line break) and how many bytes are in */
    bool erasing;
} typist;

static void type_some(an_incr *inc, char **text, size_t *len, typist *ty) {
    if (!ty->snippet) {
        /* Enter at the end of the line above a random `    return` line */
        uint32_t p = pos(*text, *len);
        char *r = strstr(*text + p, "\n    return");
        if (!r) r = strstr(*text, "\n    return");
        ty->snippet = typed[rnd(sizeof typed / sizeof *typed)];
        uint32_t nl = (uint32_t)(r - *text);
        edit(inc, text, len, nl, nl, "\n", 1);
        ty->at = nl + 1;
        ty->done = 0;
        ty->erasing = false;
        return;
    }
    size_t m = strlen(ty->snippet);
    for (uint32_t k = 1 + rnd(2); k > 0; k--) {
        if (!ty->erasing && ty->done < m) {
            uint32_t n = 1;
            while (ty->done + n < m && ((unsigned char)ty->snippet[ty->done + n] & 0xC0) == 0x80) n++;
            edit(inc, text, len, ty->at + ty->done, ty->at + ty->done, ty->snippet + ty->done, n);
            ty->done += n;
        } else if (!ty->erasing) {
            if (rnd(2)) { ty->snippet = NULL; return; } /* keep it */
            ty->erasing = true;
        } else if (ty->done) {
            uint32_t n = 1;
            while (n < ty->done && ((unsigned char)ty->snippet[ty->done - n] & 0xC0) == 0x80) n++;
            edit(inc, text, len, ty->at + ty->done - n, ty->at + ty->done, "", 0);
            ty->done -= n;
        } else {
            edit(inc, text, len, ty->at - 1, ty->at, "", 0); /* join the empty line again */
            ty->snippet = NULL;
            return;
        }
    }
}

static void session(const char *path, const char *initial, size_t len, int steps, const an_fix_options *fo, tally *tl,
                    bool typing) {
    typist ty = {0};
    an_incr *inc = an_incr_new();
    char *text = malloc(len + 1);
    memcpy(text, initial, len);
    text[len] = 0;
    for (int step = 0; step < steps; step++) {
        an_source src;
        an_source_init_mem(&src, path, text, len);
        an_incr_analyze(inc, cat, AN_LANG_PYTHON, &src, NULL, fo);
        const an_incr_stats *st = an_incr_last(inc);
        an_incr_stats last = *st;
        /* the region re-analysis and merge equal a full analysis of the same tree */
        if (an_incr_tree(inc)) {
            an_diag_list whole = {0};
            an_pyrun run = {an_incr_tree(inc), 0, UINT32_MAX, 0, 0, NULL, NULL, NULL, 0, NULL, 0, false, NULL};
            an_python_run(py, cat, &src, NULL, fo, &run, &whole);
            same(an_incr_diags(inc), &whole, text, step);
            an_diag_list_free(&whole);
        }
        /* and a fresh analysis of the text, once settled */
        bool prov = an_incr_provisional(inc);
        if (prov && rnd(2)) an_incr_settle(inc, cat, AN_LANG_PYTHON, &src, NULL, fo), prov = false;
        if (!prov) {
            an_diag_list fresh = {0};
            an_engine_analyze_source(cat, AN_LANG_PYTHON, &src, NULL, fo, &fresh);
            same(an_incr_diags(inc), &fresh, text, step);
            an_diag_list_free(&fresh);
        }
        st = &last;
        tl->analyses++;
        if (getenv("INCR_DEBUG")) fprintf(stderr, "%s step %d: %s %s\n", path, step, st->mode == AN_INCR_REGION ? "region" : "full", st->why ? st->why : "");
        if (st->mode == AN_INCR_REGION || st->mode == AN_INCR_UNCHANGED)
            tl->regions++, tl->region_bytes += st->hi - st->lo, tl->text_bytes += len;
        if (st->mode == AN_INCR_UNCHANGED) tl->unchanged++;
        an_source_free(&src);
        if (typing) {
            type_some(inc, &text, &len, &ty);
            continue;
        }
        /* 1 to 3 edits between analyses, like keystrokes coalesced by the server */
        int n = 1 + (int)rnd(3);
        for (int k = 0; k < n; k++) {
            uint32_t kind = rnd(10), p = pos(text, len);
            if (kind < 5) { /* type a snippet one character at a time */
                const char *s = snippets[rnd(sizeof snippets / sizeof *snippets)];
                size_t m = strlen(s), cut = 1 + rnd((uint32_t)m);
                while (cut < m && ((unsigned char)s[cut] & 0xC0) == 0x80) cut++;
                edit(inc, &text, &len, p, p, s, cut);
            } else if (kind < 7) { /* paste a whole snippet */
                const char *s = snippets[rnd(sizeof snippets / sizeof *snippets)];
                edit(inc, &text, &len, p, p, s, strlen(s));
            } else if (kind < 9 && len) { /* delete a little */
                uint32_t e = p + 1 + rnd(kind == 7 ? 2 : 40);
                if (e > len) e = (uint32_t)len;
                while (e < len && ((unsigned char)text[e] & 0xC0) == 0x80) e++;
                edit(inc, &text, &len, p, e, "", 0);
            } else { /* replace a word */
                uint32_t e = p;
                while (e < len && e < p + 12 && text[e] != '\n') e++;
                while (e < len && ((unsigned char)text[e] & 0xC0) == 0x80) e++;
                edit(inc, &text, &len, p, e, "cuda", 4);
            }
        }
    }
    free(text);
    an_incr_free(inc);
}

static const char *big(size_t *len) {
    static char *b;
    static size_t n;
    if (!b) {
        size_t cap = 1 << 20;
        b = malloc(cap);
        n = (size_t)sprintf(b, "\"\"\"A long module.\"\"\"\nimport torch\nimport torch.distributed as dist\n\n");
        for (int i = 0; n + 400 < cap && i < 400; i++)
            n += (size_t)sprintf(b + n,
                                 "def step_%d(model, x):\n    y = model(x).sum() * %d\n    if y > 0:\n"
                                 "        torch.cuda.synchronize()\n    return y.cuda()\n\n\n"
                                 "class Block%d:\n    def run(self, t):\n        return t.to(\"cuda\")\n\n",
                                 i, i, i);
    }
    *len = n;
    return b;
}

static void run_files(an_target target, int steps_per_file, tally *tl) {
    an_fix_options fo = {0};
    fo.target = target;
    DIR *d = opendir("fixtures/python");
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strstr(e->d_name, ".py")) continue;
        char path[512];
        snprintf(path, sizeof path, "fixtures/python/%s", e->d_name);
        size_t n = 0;
        char *t = slurp(path, &n);
        assert_non_null(t);
        session(path, t, n, steps_per_file, &fo, tl, false);
        free(t);
    }
    closedir(d);
}

static void fixtures_no_fix(void **s) {
    (void)s;
    tally tl = {0};
    run_files(AN_TARGET_NONE, steps, &tl);
    /* every step was compared with a whole and a fresh analysis inside session() */
    assert_true(tl.analyses > 0);
}

static void fixtures_compat(void **s) {
    (void)s;
    tally tl = {0};
    run_files(AN_TARGET_COMPAT, steps, &tl);
    /* every step was compared with a whole and a fresh analysis inside session() */
    assert_true(tl.analyses > 0);
}

static void fixtures_accelerator(void **s) {
    (void)s;
    tally tl = {0};
    run_files(AN_TARGET_ACCELERATOR, steps, &tl);
    /* every step was compared with a whole and a fresh analysis inside session() */
    assert_true(tl.analyses > 0);
}

/* On a long file, whitespace-only edits need no analysis at all, and typing in a function body re-analyzes that
 * function only (a region); random edits of every kind (parameters that shadow imports, probe variables, imports,
 * suppressions, broken syntax) take the region path where they can, each step compared with a whole analysis of
 * the same tree and a fresh analysis of the text inside session(). */
static void long_module(void **s) {
    (void)s;
    size_t n;
    const char *t = big(&n);
    an_fix_options fo = {0};
    fo.target = AN_TARGET_COMPAT;
    tally tl = {0};
    session("big.py", t, n, steps * 10, &fo, &tl, true);
    fprintf(stderr, "# long module: %d analyses, %d incremental (%d without a re-parse), mean region %.1f%% of the text\n",
            tl.analyses, tl.regions, tl.unchanged, tl.regions ? 100.0 * (double)tl.region_bytes / (double)tl.text_bytes : 0.0);
    assert_true(tl.unchanged > 0);
    assert_true(tl.regions - tl.unchanged > tl.analyses / 4); /* typing in a body is a region, not a full run */
    tally rnd_tl = {0};
    session("big.py", t, n, steps * 3, &fo, &rnd_tl, false);
    fprintf(stderr, "# long module, random edits: %d analyses, %d incremental (%d without a re-parse)\n",
            rnd_tl.analyses, rnd_tl.regions, rnd_tl.unchanged);
    assert_true(rnd_tl.analyses > 0); /* random edits mostly break the syntax (full runs): agreement is what counts */
}

/* Edits out of step with the text (a client bug) start over instead of corrupting the state. */
static void out_of_step_edit(void **s) {
    (void)s;
    an_incr *inc = an_incr_new();
    const char *t = "import torch\ntorch.cuda.synchronize()\n";
    an_source src;
    an_source_init_mem(&src, "a.py", t, strlen(t));
    an_incr_analyze(inc, cat, AN_LANG_PYTHON, &src, NULL, NULL);
    assert_int_equal(an_incr_diags(inc)->len, 1);
    an_incr_edit(inc, t, 5, 0, 99, "x", 1); /* wrong length, range past the end */
    an_incr_analyze(inc, cat, AN_LANG_PYTHON, &src, NULL, NULL);
    assert_int_equal(an_incr_last(inc)->mode, AN_INCR_FULL);
    assert_int_equal(an_incr_diags(inc)->len, 1);
    an_source_free(&src);
    an_incr_free(inc);
}

/* An edit of the statement that tells a receiver's type (`net = Net()` made `net = build()`) changes the fix of
 * a `.cuda()` finding in another statement of its scope (an_types reads every assignment of the name): the incremental result
 * equals a fresh analysis; an edit of another function's local of the same name leaves it a region. */
static void type_edit_elsewhere(void **s) {
    (void)s;
    an_fix_options fo = {0};
    fo.target = AN_TARGET_COMPAT;
    const char *t0 = "import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    pass\n\n\n"
                     "net = Net()\nn = 1\nif n:\n    net.cuda()\n\n\n"
                     "def other(model):\n    model = 2\n    return model\n";
    size_t len = strlen(t0);
    char *text = malloc(len + 1);
    memcpy(text, t0, len + 1);
    an_incr *inc = an_incr_new();
    an_source src;
    an_source_init_mem(&src, "m.py", text, len);
    an_incr_analyze(inc, cat, AN_LANG_PYTHON, &src, NULL, &fo);
    an_source_free(&src);
    /* another function's `model`: a region, the finding kept as it was */
    uint32_t at = (uint32_t)(strstr(text, "model = 2") - text) + 8;
    edit(inc, &text, &len, at, at + 1, "3", 1);
    an_source_init_mem(&src, "m.py", text, len);
    an_incr_analyze(inc, cat, AN_LANG_PYTHON, &src, NULL, &fo);
    assert_int_equal(an_incr_last(inc)->mode, AN_INCR_REGION);
    an_source_free(&src);
    /* the receiver's own assignment */
    at = (uint32_t)(strstr(text, "Net()\nn") - text);
    edit(inc, &text, &len, at, at + 3, "build", 5);
    an_source_init_mem(&src, "m.py", text, len);
    an_incr_analyze(inc, cat, AN_LANG_PYTHON, &src, NULL, &fo);
    an_diag_list fresh = {0};
    an_engine_analyze_source(cat, AN_LANG_PYTHON, &src, NULL, &fo, &fresh);
    same(an_incr_diags(inc), &fresh, text, 2);
    bool found = false;
    for (size_t i = 0; i < fresh.len; i++)
        if (fresh.items[i].fix && strstr(fresh.items[i].fix->title, ".cuda()")) {
            found = true;
            assert_null(strstr(fresh.items[i].fix->title, "the receiver is a torch tensor"));
        }
    assert_true(found);
    an_diag_list_free(&fresh);
    an_source_free(&src);
    an_incr_free(inc);
    free(text);
}

static int setup(void **s) {
    (void)s;
    /* INCR_SEED=N INCR_STEPS=M: a longer soak with another edit sequence */
    if (getenv("INCR_SEED")) rng ^= strtoull(getenv("INCR_SEED"), NULL, 10) * 2654435761ull;
    if (getenv("INCR_STEPS")) steps = atoi(getenv("INCR_STEPS"));
    cat = an_catalog_new();
    ut_buf err;
    ut_buf_init(&err);
    py = an_python_new();
    int n = an_catalog_load_builtin(cat, &err);
    if (!n) n = an_catalog_finalize(cat, &err);
    ut_buf_free(&err);
    return n;
}

static int teardown(void **s) {
    (void)s;
    an_catalog_free(cat);
    an_python_free(py);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(fixtures_no_fix), cmocka_unit_test(fixtures_compat),
                                       cmocka_unit_test(fixtures_accelerator), cmocka_unit_test(long_module), cmocka_unit_test(type_edit_elsewhere),
                                       cmocka_unit_test(out_of_step_edit)};
    return cmocka_run_group_tests_name("incr", tests, setup, teardown);
}
