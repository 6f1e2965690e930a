/* an_incr: incremental analysis of an editor buffer.
 *
 * Findings of the Python front end depend on three kinds of context: the statement they sit in (guards, shadowing
 * parameters, superseding findings), the file's imports and prologue (name resolution, the insertion point and
 * contents of fix imports, the device definition), and file-wide facts (syntax errors, suppression comments). A
 * re-analysis after an edit therefore covers the top-level statements the edit touched (class members when the
 * edit stays inside a class body), and falls back to the whole file whenever the edited text reaches the second
 * or third kind. tests/unit/test_incr.c checks the result against fresh analyses over random edit sequences. */
#include "analyzer/core/an_incr.h"
#include "util/ut_find.h"
#include "util/ut_hash.h"
#include "analyzer/core/an_engine.h"
#include "analyzer/python/an_pyfix.h"
#include "analyzer/python/an_python.h"
#include "analyzer/core/an_suppress.h"
#include <tree_sitter/api.h>

typedef struct {
    uint32_t start, end;
} span;

struct an_incr {
    an_python *py;
    TSTree *tree;          /* the tree of the last analyzed text, edited with every edit since */
    an_diag_list diags;    /* its findings, shifted with every edit since */
    UT_VEC(span) errors;   /* its syntax-error regions, shifted */
    UT_VEC(span) dirty;    /* what the edits since touched, in current coordinates */
    ut_buf removed;        /* the text the edits since removed, with some context around it */
    bool valid;            /* tree, diags and errors describe the text up to the recorded edits */
    bool full;             /* an edit reached context: the next analysis covers the whole file */
    const char *why;
    uint32_t len;          /* length of the text after the recorded edits */
    uint64_t opt_sig;      /* the options of the last analysis */
    unsigned needs;        /* what its fixes' shared insertion edits were made for (AN_NEED_*) */
    an_pyscope scope;      /* the file-wide facts (import bindings, shadows, probe names) of the last analysis */
    an_pyscope_cache *scache; /* those facts per top-level statement text: only edited statements are walked */
    bool have_scope;
    bool provisional;      /* the last analysis used an incrementally parsed tree with syntax errors */
    bool unparsed;         /* the tree carries inert edits (see inert) not parsed yet */
    an_incr_stats last;
};

/* Text whose edit changes findings outside its statement: imports (resolution, fix imports), suppression
 * comments and the helper module (xpuify), the device definition of accelerator fixes. */
/* words whose edit changes file-wide facts: imports, suppressions, the device definition, parameters (which shadow
 * imports), names and branches that already consider XPU */
/* Words whose statements hold facts other statements' findings read. Function and lambda parameters (which shadow
 * imports inside them) are not among them: a region is made of whole top-level statements and class members, so a
 * function's parameters and body are re-analyzed together, and the scope is collected again over the whole tree
 * and compared with the last one (same_facts) on every region run. */
static const char *const context_words[] = {"import", "xpuify", AN_PYFIX_DEV_NAME, "current_accelerator", "xpu",
                                            "XPU", "accelerator", NULL};

an_incr *an_incr_new(void) { return ut_calloc(1, sizeof(an_incr)); }

static void drop_state(an_incr *inc) {
    if (inc->tree) ts_tree_delete(inc->tree);
    inc->tree = NULL;
    an_diag_list_free(&inc->diags);
    ut_vec_free(&inc->errors);
    ut_vec_free(&inc->dirty);
    ut_buf_free(&inc->removed);
    if (inc->have_scope) an_pyscope_free(&inc->scope);
    inc->have_scope = false;
    inc->provisional = false;
    inc->unparsed = false;
    inc->valid = false;
    inc->full = false;
}

void an_incr_reset(an_incr *inc) { drop_state(inc); }

void an_incr_free(an_incr *inc) {
    if (!inc) return;
    drop_state(inc);
    an_python_free(inc->py);
    an_pyscope_cache_free(inc->scache);
    ut_free(inc);
}

const an_diag_list *an_incr_diags(const an_incr *inc) { return &inc->diags; }
const an_incr_stats *an_incr_last(const an_incr *inc) { return &inc->last; }

bool an_incr_provisional(const an_incr *inc) { return inc->provisional; }
const TSTree *an_incr_tree(const an_incr *inc) { return inc->valid && !inc->unparsed ? inc->tree : NULL; }

void an_incr_settle(an_incr *inc, const an_catalog *cat, an_lang lang, const an_source *src, const bool *en,
                    const an_fix_options *fix) {
    if (!inc->provisional) return;
    drop_state(inc); /* a fresh parse and a full analysis */
    an_incr_analyze(inc, cat, lang, src, en, fix);
}

an_text_kind an_incr_kind_at(const an_incr *inc, uint32_t byte) {
    if (!inc->tree || !inc->valid || byte >= inc->len) return AN_AT_CODE;
    TSNode n = ts_node_descendant_for_byte_range(ts_tree_root_node(inc->tree), byte, byte + 1);
    for (; !ts_node_is_null(n); n = ts_node_parent(n)) {
        if (ts_node_start_byte(n) > byte || ts_node_end_byte(n) <= byte) continue;
        const char *t = ts_node_type(n);
        if (!strcmp(t, "comment")) return AN_AT_COMMENT;
        if (!strcmp(t, "string") || !strcmp(t, "string_content")) return AN_AT_STRING;
    }
    return AN_AT_CODE;
}

static void need_full(an_incr *inc, const char *why) {
    if (!inc->full) inc->why = why;
    inc->full = true;
}

static bool has_context_word(const char *s, size_t n) {
    for (int i = 0; context_words[i]; i++)
        if (ut_memmem(s, n, context_words[i], strlen(context_words[i]))) return true;
    return false;
}

/* An occurrence of a context word that the edit [start, old_end) removes part of, or (an insertion) splits. */
static bool touches_context_word(const char *t, uint32_t len, uint32_t start, uint32_t old_end) {
    for (int i = 0; context_words[i]; i++) {
        uint32_t L = (uint32_t)strlen(context_words[i]);
        uint32_t ws = start >= L ? start - L : 0, we = old_end + L < len ? old_end + L : len;
        for (const char *q = t + ws; q < t + we;) {
            q = ut_memmem(q, (size_t)(t + we - q), context_words[i], L);
            if (!q) break;
            uint32_t a = (uint32_t)(q - t);
            if (old_end > start ? (a < old_end && a + L > start) : (a < start && a + L > start)) return true;
            q++;
        }
    }
    return false;
}

/* tree-sitter points count rows by '\n' and columns in bytes */
static TSPoint point_at(const char *t, uint32_t byte) {
    TSPoint p = {0, 0};
    uint32_t ls = 0;
    for (const char *q = t; (q = memchr(q, '\n', (size_t)(t + byte - q))); q++) p.row++, ls = (uint32_t)(q - t) + 1;
    p.column = byte - ls;
    return p;
}

static TSPoint point_after(TSPoint p, const char *s, uint32_t n) {
    const char *nl = NULL;
    for (const char *q = s; (q = memchr(q, '\n', (size_t)(s + n - q))); q++) p.row++, nl = q;
    p.column = nl ? (uint32_t)(s + n - nl - 1) : p.column + n;
    return p;
}

/* Maps an offset of the text before an edit to the text after it; an offset inside the replaced bytes goes to
 * the edit's start (a range's start) or end (a range's end), and *inside says so. */
static uint32_t map_off(uint32_t o, uint32_t start, uint32_t old_end, uint32_t new_end, bool is_end, bool *inside) {
    if (o <= start) return o;
    if (o >= old_end) return o - old_end + new_end;
    if (inside) *inside = true;
    return is_end ? new_end : start;
}

static void map_span(span *s, uint32_t start, uint32_t old_end, uint32_t new_end) {
    s->start = map_off(s->start, start, old_end, new_end, false, NULL);
    s->end = map_off(s->end, start, old_end, new_end, true, NULL);
}

static bool is_class_with_body(TSNode n, TSNode *body) {
    if (!strcmp(ts_node_type(n), "decorated_definition")) n = ts_node_child_by_field_name(n, "definition", 10);
    if (ts_node_is_null(n) || strcmp(ts_node_type(n), "class_definition")) return false;
    *body = ts_node_child_by_field_name(n, "body", 4);
    return !ts_node_is_null(*body);
}

/* Extends out with the statements of container that touch [a, b]: top-level statements, or the members of a
 * class when [a, b] lies strictly inside its body. */
static void units(TSNode container, uint32_t a, uint32_t b, span *out) {
    TSTreeCursor cur = ts_tree_cursor_new(container);
    if (ts_tree_cursor_goto_first_child_for_byte(&cur, a ? a - 1 : 0) >= 0) {
        do {
            TSNode ch = ts_tree_cursor_current_node(&cur);
            uint32_t s = ts_node_start_byte(ch), e = ts_node_end_byte(ch);
            if (s > b) break;
            if (e < a) continue;
            TSNode body;
            if (is_class_with_body(ch, &body) && ts_node_start_byte(body) < a && b < ts_node_end_byte(body)) {
                units(body, a, b, out);
                continue;
            }
            if (s < out->start) out->start = s;
            if (e > out->end) out->end = e;
        } while (ts_tree_cursor_goto_next_sibling(&cur));
    }
    ts_tree_cursor_delete(&cur);
}

static void collect_errors(TSNode root, void *vec) {
    UT_VEC(span) *errs = vec;
    if (!ts_node_has_error(root)) return;
    TSTreeCursor cur = ts_tree_cursor_new(root);
    for (;;) {
        TSNode n = ts_tree_cursor_current_node(&cur);
        bool descend = ts_node_has_error(n);
        if (descend && (ts_node_symbol(n) == (TSSymbol)-1 || ts_node_is_missing(n))) {
            span s = {ts_node_start_byte(n), ts_node_end_byte(n)};
            ut_vec_push(errs, s);
            descend = false;
        }
        if (descend && ts_tree_cursor_goto_first_child(&cur)) continue;
        while (!ts_tree_cursor_goto_next_sibling(&cur))
            if (!ts_tree_cursor_goto_parent(&cur)) goto done;
    }
done:
    ts_tree_cursor_delete(&cur);
}

/* The leading comments, docstring and imports: where fixes insert their imports. */
static uint32_t prologue_end(TSNode root, const char *text) {
    TSTreeCursor cur = ts_tree_cursor_new(root);
    uint32_t end = 0;
    if (ts_tree_cursor_goto_first_child(&cur)) {
        do {
            TSNode n = ts_tree_cursor_current_node(&cur);
            const char *t = ts_node_type(n);
            uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
            TSNode first = ts_node_named_child(n, 0);
            bool pro = !strcmp(t, "comment") || strstr(t, "import") ||
                       (!strcmp(t, "expression_statement") && !ts_node_is_null(first) &&
                        !strcmp(ts_node_type(first), "string")) ||
                       ut_memmem(text + s, e - s, "import", 6);
            if (!pro) break;
            end = e;
        } while (ts_tree_cursor_goto_next_sibling(&cur));
    }
    ts_tree_cursor_delete(&cur);
    return end;
}

/* Whether a suppression comment's reach (its line and target line, a disable block, a whole file) touches
 * [lo, hi]: then findings outside the region may be hidden or revealed by the edit. */
static bool directives_touch(const an_source *src, uint32_t lo, uint32_t hi) {
    const char *t = src->text, *end = t + src->len;
    an_suppressions sup = {0};
    for (const char *p = t; (p = ut_memmem(p, (size_t)(end - p), "xpuify:", 7)); p += 7) {
        uint32_t at = (uint32_t)(p - t), ls = at, le = at;
        while (ls > 0 && t[ls - 1] != '\n' && t[ls - 1] != '\r') ls--;
        while (le < src->len && t[le] != '\n' && t[le] != '\r') le++;
        uint32_t hash = at;
        while (hash > ls && t[hash] != '#') hash--;
        if (t[hash] == '#') an_suppress_add_comment(&sup, src, hash, le, "#");
    }
    if (!sup.items.len) return false;
    an_suppress_finish(&sup, src, NULL);
    bool touch = false;
    for (size_t i = 0; i < sup.items.len && !touch; i++) {
        const an_directive *d = &sup.items.items[i];
        uint32_t cl, cc, first, last;
        an_source_position(src, d->start, &cl, &cc);
        switch (d->kind) {
        case AN_SUP_FILE: first = 1, last = src->nlines; break;
        default:
            first = cl < d->first ? cl : d->first;
            last = d->last > cl ? d->last : cl;
            /* without line facts the statement an own-line ignore covers is not known here: assume the rest */
            if (d->next_line) last = src->nlines;
            break;
        }
        uint32_t a, b, x, y;
        an_source_line_span(src, first, &a, &x);
        an_source_line_span(src, last > src->nlines ? src->nlines : last, &y, &b);
        touch = a <= hi && lo <= b + 1;
    }
    an_suppress_free(&sup);
    return touch;
}

static bool all_space(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') return false;
    return true;
}

/* An edit that cannot change any finding: whitespace added or removed where Python ignores it (on a blank line,
 * or at the end of a line of code: a new blank line, trailing spaces), in a buffer without syntax errors, away
 * from any finding and fix edit, not after a line continuation. Pressing Enter and indenting are such edits;
 * they need no re-parse, only the shift of positions. */
static bool inert(const an_incr *inc, const char *t, uint32_t len, uint32_t start, uint32_t old_end, const char *ins,
                  uint32_t ins_len) {
    if (!inc->tree || inc->full || inc->dirty.len || ts_node_has_error(ts_tree_root_node(inc->tree))) return false;
    if (!all_space(t + start, old_end - start) || !all_space(ins, ins_len)) return false;
    uint32_t le = old_end;
    while (le < len && t[le] != '\n' && t[le] != '\r') le++;
    if (!all_space(t + old_end, le - old_end)) return false;      /* code after the edit on its line */
    uint32_t ls = start;
    while (ls > 0 && t[ls - 1] != '\n' && t[ls - 1] != '\r') ls--;
    if (all_space(t + ls, start - ls) && ls > 0) {
        /* a blank line: the one above must not continue into it */
        uint32_t p = ls;
        while (p > 0 && (t[p - 1] == '\n' || t[p - 1] == '\r')) p--;
        if (p > 0 && t[p - 1] == '\\') return false;
    }
    if (start > 0 && t[start - 1] == '\\') return false;
    if (an_incr_kind_at(inc, start) != AN_AT_CODE || (old_end > start && an_incr_kind_at(inc, old_end - 1) != AN_AT_CODE))
        return false;
    for (size_t i = 0; i < inc->diags.len; i++) {
        const an_diag *d = &inc->diags.items[i];
        if (d->start <= old_end && d->end >= start) return false;
        if (!d->fix) continue;
        for (size_t k = 0; k < d->fix->edits.len; k++)
            if (d->fix->edits.items[k].start <= old_end + 1 && d->fix->edits.items[k].end >= start) return false;
    }
    return true;
}

void an_incr_edit(an_incr *inc, const char *old_text, uint32_t old_len, uint32_t start, uint32_t old_end,
                  const char *ins, uint32_t ins_len) {
    if (!inc->valid) return;
    if (old_len != inc->len || start > old_end || old_end > old_len) {
        drop_state(inc); /* edits out of step with the text: start over */
        return;
    }
    uint32_t new_end = start + ins_len;
    bool blank = inert(inc, old_text, old_len, start, old_end, ins, ins_len);
    /* what the edit removed or split may have held context (the inserted text is checked at analysis time) */
    if (touches_context_word(old_text, old_len, start, old_end))
        need_full(inc, "the edit touched imports, suppressions or the device definition");
    uint32_t ws = start > 40 ? start - 40 : 0, we = old_end + 40 < old_len ? old_end + 40 : old_len;
    if (inc->removed.len < (1u << 20)) {
        ut_buf_append(&inc->removed, old_text + ws, we - ws);
        ut_buf_putc(&inc->removed, '\n');
    } else {
        need_full(inc, "the edits removed much text");
    }
    /* the statements the edit touches, as they were: their findings go */
    span old_units = {UINT32_MAX, 0};
    if (inc->tree) units(ts_tree_root_node(inc->tree), start, old_end, &old_units);
    if (inc->tree) {
        TSInputEdit e;
        e.start_byte = start, e.old_end_byte = old_end, e.new_end_byte = new_end;
        e.start_point = point_at(old_text, start);
        e.old_end_point = point_after(e.start_point, old_text + start, old_end - start);
        e.new_end_point = point_after(e.start_point, ins, ins_len);
        ts_tree_edit(inc->tree, &e);
    }
    if (blank) inc->unparsed = true;
    for (size_t i = 0; i < inc->dirty.len; i++) map_span(&inc->dirty.items[i], start, old_end, new_end);
    span d = {start, new_end};
    if (!blank) ut_vec_push(&inc->dirty, d);
    if (!blank && old_units.start <= old_units.end) {
        map_span(&old_units, start, old_end, new_end);
        ut_vec_push(&inc->dirty, old_units);
    }
    for (size_t i = 0; i < inc->errors.len; i++) map_span(&inc->errors.items[i], start, old_end, new_end);
    for (size_t i = 0; i < inc->diags.len; i++) {
        an_diag *dg = &inc->diags.items[i];
        bool touched = dg->start < old_end && dg->end > start;
        dg->start = map_off(dg->start, start, old_end, new_end, false, &touched);
        dg->end = map_off(dg->end, start, old_end, new_end, true, &touched);
        if (dg->scope_end) { /* an edit inside the scope changes its text, not the finding */
            dg->scope_start = map_off(dg->scope_start, start, old_end, new_end, false, NULL);
            dg->scope_end = map_off(dg->scope_end, start, old_end, new_end, true, NULL);
        }
        if (!dg->fix) continue;
        bool stale = false;
        for (size_t k = 0; k < dg->fix->edits.len; k++) {
            an_edit *x = &dg->fix->edits.items[k];
            if (x->start < old_end && x->end > start) stale = true; /* the edit rewrote bytes the fix replaces */
            x->start = map_off(x->start, start, old_end, new_end, false, &stale);
            x->end = map_off(x->end, start, old_end, new_end, true, &stale);
        }
        /* a finding the edit touched is re-analyzed anyway; another whose fix reaches into the edit is not */
        if (stale && !touched) need_full(inc, "the edit touched bytes another finding's fix rewrites");
    }
    inc->len = old_len - (old_end - start) + ins_len;
}

static uint64_t options_sig(const an_catalog *cat, const bool *en, const an_fix_options *fix, an_lang lang) {
    uint64_t h = UT_FNV_SEED;
    size_t n = an_catalog_count(cat);
    h = ut_fnv1a(h, &n, sizeof n);
    h = ut_fnv1a(h, &lang, sizeof lang);
    if (en) h = ut_fnv1a(h, en, n * sizeof(bool));
    if (fix) {
        int v[4] = {(int)fix->target, fix->torch_major, fix->torch_minor, fix->unsafe};
        h = ut_fnv1a(h, v, sizeof v);
        if (fix->helper_module) h = ut_fnv1a(h, fix->helper_module, strlen(fix->helper_module) + 1);
        if (fix->helper_import) h = ut_fnv1a(h, fix->helper_import, strlen(fix->helper_import) + 1);
    }
    return h;
}

static void locate_all(an_diag_list *l, const an_source *src) {
    for (size_t i = 0; i < l->len; i++) an_diag_locate(&l->items[i], src);
}

static void free_diag(an_diag *d) {
    ut_free(d->message);
    an_fix_free(d->fix);
}

static bool word_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || (unsigned char)c >= 0x80; }

static bool has_word(const char *s, size_t n, const char *w, size_t wl) {
    for (const char *p = s; p + wl <= s + n && (p = ut_memmem(p, (size_t)(s + n - p), w, wl)); p++)
        if ((p == s || !word_char(p[-1])) && (p + wl == s + n || !word_char(p[wl]))) return true;
    return false;
}

/* Whether the fix of an import finding may change: it removes an unused import, so it depends on every
 * reference to the imported name. The names on the import's line stand in for the bound one (aliases). */
static bool import_refs_touched(const an_incr *inc, const an_diag *d, const an_source *src, const span *r) {
    const char *t = src->text;
    uint32_t e = d->start;
    while (e < src->len && t[e] != '\n' && t[e] != '\r' && t[e] != '#') e++;
    for (uint32_t i = d->start; i < e;) {
        if (!word_char(t[i])) { i++; continue; }
        uint32_t j = i;
        while (j < e && word_char(t[j])) j++;
        if (has_word(inc->removed.data ? inc->removed.data : "", inc->removed.len, t + i, j - i) ||
            has_word(t + r->start, r->end - r->start, t + i, j - i))
            return true;
        i = j;
    }
    return false;
}

/* w (wl bytes) bound in s[0..n): assigned (`w = `, `w += `, `w, v = `), annotated (`w: nn.Module`, a parameter
 * too) or a loop's or a with's target (`for w in`, `as w`): where an_types reads a name's type from */
static bool binds_word(const char *s, size_t n, const char *w, size_t wl) {
    for (const char *p = s; wl && (p = ut_memmem(p, n - (size_t)(p - s), w, wl)); p++) {
        size_t i = (size_t)(p - s);
        if ((i && word_char(s[i - 1])) || (i + wl < n && word_char(s[i + wl]))) continue;
        size_t k = i + wl;
        while (k < n && s[k] == ' ') k++;
        if (k < n && s[k] == ':') return true;
        if (k + 1 < n && s[k] == '=' && s[k + 1] != '=') return true;
        if (k + 2 < n && strchr("+-*/|&", s[k]) && s[k + 1] == '=') return true;
        if (k < n && s[k] == ',') { /* a tuple target: an `=` later on the line, before any call */
            for (size_t m = k; m + 1 < n && s[m] != '\n' && s[m] != '('; m++)
                if (s[m] == '=' && s[m + 1] != '=' && s[m - 1] != '=' && s[m - 1] != '!' && s[m - 1] != '<' && s[m - 1] != '>')
                    return true;
        }
        size_t h = i;
        while (h > 0 && s[h - 1] == ' ') h--;
        if ((h >= 3 && !memcmp(s + h - 3, "for", 3) && (h == 3 || !word_char(s[h - 4]))) ||
            (h >= 2 && !memcmp(s + h - 2, "as", 2) && (h == 2 || !word_char(s[h - 3]))))
            return true;
    }
    return false;
}

/* A kept finding whose fix rewrites `RECV.cuda(...)` decides safety by the receiver's type (an_types), read from the
 * assignments of RECV's root name anywhere in the file: an edit that uses or drops that name (`model = Net()` made
 * `model = with ...`) can change the verdict away from the edited statements. */
static bool type_refs_touched(const an_incr *inc, const span *fn, const an_diag *d, const an_source *src,
                              const span *r) {
    const char *t = src->text;
    /* a name bound inside a function (fn: the one holding the region, if any) is that function's: findings outside
     * it read another scope's */
    if (fn->end && (d->start < fn->start || d->end > fn->end)) return false;
    if (!d->fix || d->end - d->start < 4 || d->end > src->len) return false;
    /* the finding spans the call (`model.cuda()`) or its member (`cuda`) */
    const char *dot = d->start > 0 && t[d->start - 1] == '.' && !memcmp(t + d->start, "cuda", 4)
                          ? t + d->start - 1
                          : ut_memmem(t + d->start, d->end - d->start, ".cuda(", 6);
    if (!dot) return false;
    uint32_t e = (uint32_t)(dot - t), b = e;
    while (b > 0 && (word_char(t[b - 1]) || t[b - 1] == '.')) b--; /* the receiver's chain: self.model */
    while (b < e && t[b] == '.') b++;
    uint32_t j = b;
    while (j < e && word_char(t[j])) j++; /* its root name */
    if (j == b) return false;
    return binds_word(inc->removed.data ? inc->removed.data : "", inc->removed.len, t + b, j - b) ||
           binds_word(t + r->start, r->end - r->start, t + b, j - b);
}

/* The region to re-analyze: the statements of the new tree touching what changed. */
static bool region(an_incr *inc, TSTree *old, TSTree *tree, span *r) {
    uint32_t n = 0;
    TSRange *ch = ts_tree_get_changed_ranges(old, tree, &n);
    for (uint32_t i = 0; i < n; i++) {
        span s = {ch[i].start_byte, ch[i].end_byte};
        ut_vec_push(&inc->dirty, s);
    }
    free(ch);
    r->start = UINT32_MAX, r->end = 0;
    TSNode root = ts_tree_root_node(tree);
    for (size_t i = 0; i < inc->dirty.len; i++) {
        span s = inc->dirty.items[i];
        units(root, s.start, s.end, r);
        /* text between statements (blank lines, a dedent) is part of the region too */
        if (s.start < r->start) r->start = s.start;
        if (s.end > r->end) r->end = s.end;
    }
    return r->start < r->end;
}

static bool same_strs(char *const *a, size_t na, char *const *b, size_t nb) {
    if (na != nb) return false;
    for (size_t i = 0; i < na; i++) {
        bool found = false;
        for (size_t j = 0; j < nb && !found; j++) found = !strcmp(a[i], b[j]);
        if (!found) return false;
    }
    return true;
}

/* The facts of the whole file that findings elsewhere depend on: import bindings, star imports, the names that
 * hold a device probe. (Parameter shadows are ranges inside functions, which are whole units of a region.) */
static bool same_facts(const an_pyscope *a, const an_pyscope *b) {
    if (a->bindings.len != b->bindings.len) return false;
    for (size_t i = 0; i < a->bindings.len; i++) {
        const an_binding *x = &a->bindings.items[i], *y = &b->bindings.items[i];
        if (strcmp(x->local, y->local) || strcmp(x->qual, y->qual) || x->in_fallback != y->in_fallback ||
            x->module != y->module)
            return false;
    }
    return same_strs(a->stars.items, a->stars.len, b->stars.items, b->stars.len) &&
           same_strs(a->agnostic_names.items, a->agnostic_names.len, b->agnostic_names.items, b->agnostic_names.len);
}

/* the file-wide facts of tree, through the buffer's per-statement cache */
static void collect_facts(an_incr *inc, const TSTree *tree, const an_source *src, an_pyscope *out) {
    if (!inc->scache) inc->scache = an_pyscope_cache_new();
    an_pyscope_collect_cached(out, ts_tree_root_node(tree), src->text, inc->scache);
}

static void full_run(an_incr *inc, const an_catalog *cat, const an_source *src, const bool *en,
                     const an_fix_options *fix, const char *why) {
    an_diag_list_free(&inc->diags);
    if (inc->have_scope) an_pyscope_free(&inc->scope);
    an_pyrun run = {inc->tree, 0, UINT32_MAX, 0, 0, NULL, &inc->scope, NULL, 0, NULL, 0, false, NULL};
    if (inc->tree) {
        collect_facts(inc, inc->tree, src, &inc->scope);
        run.scope = &inc->scope, run.keep_scope = NULL;
    }
    an_python_run(inc->py, cat, src, en, fix, &run, &inc->diags);
    inc->have_scope = true;
    inc->needs = run.needs;
    inc->last.mode = AN_INCR_FULL;
    inc->last.why = why;
}

void an_incr_analyze(an_incr *inc, const an_catalog *cat, an_lang lang, const an_source *src, const bool *en,
                     const an_fix_options *fix) {
    memset(&inc->last, 0, sizeof inc->last);
    uint64_t sig = options_sig(cat, en, fix, lang);
    if (sig != inc->opt_sig) {
        drop_state(inc);
        inc->opt_sig = sig;
    }
    if (inc->valid && inc->len != src->len) drop_state(inc);
    if (lang != AN_LANG_PYTHON || !an_catalog_prefilter(cat, lang, src->text, src->len, NULL)) {
        /* no incremental state for other languages; nothing to parse when no rule can match */
        drop_state(inc);
        an_engine_analyze_source(cat, lang, src, en, fix, &inc->diags);
        inc->last.mode = lang == AN_LANG_PYTHON ? AN_INCR_SKIPPED : AN_INCR_FULL;
        inc->last.why = lang == AN_LANG_PYTHON ? "no rule can match" : "not Python";
        return;
    }
    if (!inc->py) inc->py = an_python_new();
    if (inc->valid && !inc->full && !inc->dirty.len && inc->tree && !src->body) {
        /* nothing but inert edits since the last analysis: the findings stand, shifted */
        ut_buf_clear(&inc->removed);
        locate_all(&inc->diags, src);
        inc->last.mode = AN_INCR_UNCHANGED;
        return;
    }
    inc->unparsed = false;
    TSTree *old = inc->valid ? inc->tree : NULL;
    TSTree *tree = an_python_parse(inc->py, src, old);
    /* tree-sitter's error recovery after an incremental parse can differ from a fresh parse's: while the buffer
     * has syntax errors the findings are provisional (analyzed on this tree, which is what the editor shows
     * while typing); an_incr_settle re-parses from scratch when the user pauses */
    inc->provisional = old && tree && ts_node_has_error(ts_tree_root_node(tree));
    if (!tree) {
        drop_state(inc);
        inc->last.mode = AN_INCR_SKIPPED;
        return;
    }
    const char *why = !inc->valid ? "no earlier analysis" : inc->full ? inc->why : src->body ? "byte-order mark" : NULL;
    span r = {0, 0};
    UT_VEC(span) errs = {0};
    collect_errors(ts_tree_root_node(tree), &errs);
    if (!why && !region(inc, old, tree, &r)) {
        /* nothing but whitespace between statements moved: the findings stand, shifted */
        ts_tree_delete(inc->tree);
        inc->tree = tree;
        ut_vec_free(&inc->errors);
        inc->errors.items = errs.items, inc->errors.len = errs.len, inc->errors.cap = errs.cap;
        inc->dirty.len = 0;
        ut_buf_clear(&inc->removed);
        locate_all(&inc->diags, src);
        inc->last.mode = AN_INCR_REGION;
        return;
    }
    if (!why && has_context_word(src->text + r.start, r.end - r.start))
        why = "the edited statements hold imports, suppressions or the device definition";
    if (!why && r.start < prologue_end(ts_tree_root_node(tree), src->text)) why = "the edit reached the prologue";
    /* syntax errors hide the findings they overlap and are reported as one finding: the statements holding
     * them, before and after the edit, join the region */
    if (!why && (errs.len || inc->errors.len)) {
        TSNode root = ts_tree_root_node(tree);
        for (size_t i = 0; i < errs.len; i++) units(root, errs.items[i].start, errs.items[i].end, &r);
        for (size_t i = 0; i < inc->errors.len; i++) units(root, inc->errors.items[i].start, inc->errors.items[i].end, &r);
        for (size_t i = 0; i < errs.len; i++)
            if (errs.items[i].start < r.start || errs.items[i].end > r.end) r.start = 0, r.end = src->len;
        for (size_t i = 0; i < inc->errors.len; i++)
            if (inc->errors.items[i].start < r.start || inc->errors.items[i].end > r.end) r.start = 0, r.end = src->len;
        if (has_context_word(src->text + r.start, r.end - r.start))
            why = "syntax errors reach statements with imports, suppressions or the device definition";
        else if (r.start < prologue_end(root, src->text))
            why = "syntax errors reach the prologue";
    }
    if (!why && directives_touch(src, r.start, r.end)) why = "a suppression comment reaches the edited statements";
    span fn = {0, 0}; /* the innermost function holding the region (type_refs_touched) */
    for (TSNode n = ts_node_descendant_for_byte_range(ts_tree_root_node(tree), r.start, r.end > r.start ? r.end - 1 : r.start);
         !ts_node_is_null(n); n = ts_node_parent(n))
        if (!strcmp(ts_node_type(n), "function_definition") && ts_node_start_byte(n) <= r.start &&
            ts_node_end_byte(n) >= r.end) {
            fn.start = ts_node_start_byte(n), fn.end = ts_node_end_byte(n);
            break;
        }
    for (size_t i = 0; i < inc->diags.len && !why; i++) {
        const an_diag *d = &inc->diags.items[i];
        bool overlaps = d->start < r.end && d->end > r.start;
        if (overlaps && (d->start < r.start || d->end > r.end)) why = "a finding straddles the edited statements";
        /* a design finding (XPU810-XPU812) speaks for the findings left out in its scope: an edit there can make it
         * or unmake it away from the edited statements */
        else if (d->scope_end > d->scope_start && d->scope_start < r.end && d->scope_end > r.start)
            why = "the edit reaches a scope a design finding speaks for";
        else if (!overlaps && d->origin == AN_ORIGIN_IMPORT && import_refs_touched(inc, d, src, &r))
            why = "the edit uses or drops a name an import finding's fix depends on";
        else if (!overlaps && type_refs_touched(inc, &fn, d, src, &r))
            why = "the edit uses or drops a name whose type a `.cuda()` finding's fix depends on";
    }
    if (old) ts_tree_delete(old);
    inc->tree = tree;
    ut_vec_free(&inc->errors);
    inc->errors.items = errs.items, inc->errors.len = errs.len, inc->errors.cap = errs.cap;
    inc->dirty.len = 0;
    ut_buf_clear(&inc->removed);
    inc->full = false;
    inc->valid = true;
    inc->len = src->len;
    if (why) {
        full_run(inc, cat, src, en, fix, why);
        return;
    }
    /* keep the findings outside the region, analyze the region, merge */
    size_t w = 0;
    for (size_t i = 0; i < inc->diags.len; i++) {
        an_diag *d = &inc->diags.items[i];
        bool in = d->start < r.end && d->end > r.start;
        in |= d->start == d->end && d->start >= r.start && d->start < r.end;
        if (in) free_diag(d);
        else inc->diags.items[w++] = *d;
    }
    inc->diags.len = w;
    unsigned outside = 0;
    for (size_t i = 0; i < inc->diags.len; i++)
        if (inc->diags.items[i].fix) outside |= inc->diags.items[i].fix->needs;
    an_diag_list fresh = {0};
    /* the file-wide facts (bindings, parameter names that shadow them, names holding device probes) are collected
     * again, from the cache for the statements the edits left alone: an edit inside the region can add a
     * parameter or a probe variable */
    an_pyscope facts;
    collect_facts(inc, tree, src, &facts);
    an_pyrun run = {tree, r.start, r.end, outside, 0, &facts, NULL, NULL, 0, NULL, 0, false, NULL};
    an_python_run(inc->py, cat, src, en, fix, &run, &fresh);
    /* findings outside the region read the file-wide facts too: when the edit changed them (a probe variable
     * added, an import bound differently), the kept findings may be wrong */
    if (!inc->have_scope || !same_facts(&inc->scope, &facts)) {
        an_pyscope_free(&facts);
        an_diag_list_free(&fresh);
        full_run(inc, cat, src, en, fix, "the edit changed file-wide facts (imports, device probe variables)");
        return;
    }
    an_pyscope_free(&inc->scope);
    inc->scope = facts;
    if (run.needs != inc->needs) {
        /* the file's fixes now need other imports or definitions: every fix's insertion edits change */
        an_diag_list_free(&fresh);
        full_run(inc, cat, src, en, fix, "the fixes need other imports than before");
        return;
    }
    for (size_t i = 0; i < fresh.len; i++) ut_vec_push(&inc->diags, fresh.items[i]);
    ut_vec_free(&fresh);
    an_diag_list_sort(&inc->diags);
    locate_all(&inc->diags, src);
    inc->last.mode = AN_INCR_REGION;
    inc->last.lo = r.start, inc->last.hi = r.end;
}
