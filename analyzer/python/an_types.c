/* an_types: is a receiver a torch tensor or module (see an_types.h). Expressions are read as text: a dotted chain,
 * optionally called (`torch.zeros(3)`, `Net()`, `x.float()`), or a name whose assignments, parameter annotation
 * or loop say what it holds. Each fact that scans the file (an import read from the text, a class of the file, the
 * assignments of a name in its scope) is computed once per file and kept (an_types), so a file with a `.cuda()` on
 * every line costs one scan per name, not one per finding. */
#include "analyzer/python/an_types.h"
#include "util/ut_find.h"
#include "analyzer/project/an_project.h"
#include "analyzer/project/an_pystdlib.h"
#include "util/ut_hash.h"
#include "util/ut_mem.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 5

/* a kept fact; its key is a text (a name, or a dotted chain) and the numbers beside it */
enum { K_IMPORT, K_CLASS, K_NAME, K_WORD, K_LOADER, K_DEF, K_CLASSDEF };
typedef struct { uint32_t p; int8_t c; } occ; /* an occurrence of a name that says something: +1 known, -1 unknown */
typedef struct fact {
    struct fact *next;
    uint64_t h;
    int kind, depth;
    const char *k;
    size_t kn;
    uint32_t lo, hi, hdr;
    bool in_def;
    bool result;          /* K_IMPORT: found (qual holds the name); K_CLASS: the answer */
    char *qual;
    int known, unknown;   /* K_NAME: the occurrences' sums, and those that count */
    uint32_t hi_v, hdr_v; /* K_DEF: the def's body end and header end */
    int8_t used;          /* K_NAME: used_as_torch in [lo, hi) (0: not asked yet, 1 yes, -1 no) */
    UT_VEC(occ) occs;
} fact;

struct an_types {
    const char *t;
    uint32_t len;
    const an_pyscope *scope;
    fact **b;
    size_t nb, n;
    uint32_t *lines;      /* where each line starts (made at the first question that needs it) */
    size_t nlines;
    uint32_t *up;         /* per line, the nearest line before it that is not blank or a comment and is indented
                           * less (UINT32_MAX: none); made with lines */
    bool words_done;      /* the K_WORD facts are made */
    bool classes_done;    /* the K_CLASSDEF facts are made */
    bool imports_done;    /* imports holds the import lines */
    UT_VEC(uint32_t) imports;
    bool ik_done, ik_r;   /* imports_known's answer, for project ik_p and helper ik_helper; its why */
    const an_project *ik_p;
    char *ik_helper;
    char ik_why[128];
    int32_t *bal;         /* per byte i, the brackets opened less those closed in [0, i) (made by bound_here) */
};

an_types *an_types_new(const char *text, uint32_t len, const an_pyscope *scope) {
    an_types *m = ut_calloc(1, sizeof *m);
    m->t = text, m->len = len, m->scope = scope;
    m->nb = 64;
    m->b = ut_calloc(m->nb, sizeof *m->b);
    return m;
}

void an_types_free(an_types *m) {
    if (!m) return;
    for (size_t i = 0; i < m->nb; i++)
        for (fact *f = m->b[i], *nx; f; f = nx) {
            nx = f->next;
            ut_free(f->qual);
            ut_vec_free(&f->occs);
            ut_free(f);
        }
    ut_free(m->b);
    ut_free(m->lines);
    ut_free(m->up);
    ut_vec_free(&m->imports);
    ut_free(m->ik_helper);
    ut_free(m->bal);
    ut_free(m);
}

static uint64_t fact_hash(int kind, const char *k, size_t kn, int depth, uint32_t lo, uint32_t hi, uint32_t hdr, bool in_def) {
    uint32_t nums[6] = {(uint32_t)kind, (uint32_t)depth, lo, hi, hdr, in_def};
    return ut_fnv1a(ut_fnv1a(UT_FNV_SEED, k, kn), nums, sizeof nums);
}

static fact *fact_find(an_types *m, int kind, const char *k, size_t kn, int depth, uint32_t lo, uint32_t hi,
                       uint32_t hdr, bool in_def, uint64_t h) {
    for (fact *f = m->b[h & (m->nb - 1)]; f; f = f->next)
        if (f->h == h && f->kind == kind && f->kn == kn && f->depth == depth && f->lo == lo && f->hi == hi &&
            f->hdr == hdr && f->in_def == in_def && !memcmp(f->k, k, kn))
            return f;
    return NULL;
}

static fact *fact_add(an_types *m, int kind, const char *k, size_t kn, int depth, uint32_t lo, uint32_t hi,
                      uint32_t hdr, bool in_def, uint64_t h) {
    if (m->n >= m->nb) { /* grow: load factor at most 1 */
        size_t nb = m->nb * 2;
        fact **b = ut_calloc(nb, sizeof *b);
        for (size_t i = 0; i < m->nb; i++)
            for (fact *f = m->b[i], *nx; f; f = nx) {
                nx = f->next;
                f->next = b[f->h & (nb - 1)];
                b[f->h & (nb - 1)] = f;
            }
        ut_free(m->b);
        m->b = b, m->nb = nb;
    }
    fact *f = ut_calloc(1, sizeof *f);
    f->h = h, f->kind = kind, f->k = k, f->kn = kn, f->depth = depth, f->lo = lo, f->hi = hi, f->hdr = hdr;
    f->in_def = in_def;
    f->next = m->b[h & (m->nb - 1)];
    m->b[h & (m->nb - 1)] = f;
    m->n++;
    return f;
}

typedef struct {
    const char *t;
    uint32_t len;
    const an_pyscope *scope;
    an_types *memo;
} ty;

static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }
static bool chain_char(char c) { return ident_char(c) || c == '.'; }

static uint32_t skip_ws(const ty *y, uint32_t p, uint32_t end) {
    while (p < end && (y->t[p] == ' ' || y->t[p] == '\t')) p++;
    return p;
}

static uint32_t trim_end(const ty *y, uint32_t s, uint32_t e) {
    while (e > s && isspace((unsigned char)y->t[e - 1])) e--;
    return e;
}

/* A top-level import of `name` read from the text (`from a.b import c as name`, `import a.b as name`, `import
 * name`): the qualified name into out. The front end may have parsed only the imports its rules resolve. */
/* The lines starting with `import ` or `from `, their starts ascending in m->imports: found once, so that the
 * question for each name reads those lines only, not the file. */
static void make_import_lines(const ty *y) {
    an_types *m = y->memo;
    m->imports_done = true;
    const char *t = y->t, *end = t + y->len;
    for (const char *ls = t; ls < end;) {
        const char *le = memchr(ls, '\n', (size_t)(end - ls));
        if (!le) le = end;
        size_t ll = (size_t)(le - ls);
        if ((ll > 7 && !memcmp(ls, "import ", 7)) || (ll > 5 && !memcmp(ls, "from ", 5)))
            ut_vec_push(&m->imports, (uint32_t)(ls - t));
        ls = le + 1;
    }
}

static bool text_import_scan(const ty *y, const char *name, size_t n, char *out, size_t cap) {
    const char *t = y->t, *end = t + y->len;
    if (!y->memo->imports_done) make_import_lines(y);
    for (size_t li = 0; li < y->memo->imports.len; li++) {
        const char *ls = t + y->memo->imports.items[li];
        const char *le = memchr(ls, '\n', (size_t)(end - ls));
        if (!le) le = end;
        size_t ll = (size_t)(le - ls);
        if (ll > 7 && !memcmp(ls, "import ", 7)) { /* import a.b as name / import name */
            const char *m = ls + 7, *me = m;
            while (me < le && chain_char(*me)) me++;
            const char *as = ut_memmem(me, (size_t)(le - me), " as ", 4);
            const char *al = as ? as + 4 : m, *ae = as ? as + 4 : me;
            if (as) while (ae < le && ident_char(*ae)) ae++;
            if ((size_t)(ae - al) == n && !memcmp(al, name, n) && (size_t)(me - m) < cap) {
                snprintf(out, cap, "%.*s", (int)(me - m), m);
                return true;
            }
        } else if (ll > 5 && !memcmp(ls, "from ", 5)) {
            const char *m = ls + 5, *me = m;
            while (me < le && chain_char(*me)) me++;
            const char *imp = ut_memmem(me, (size_t)(le - me), " import ", 8);
            for (const char *p = imp ? imp + 8 : le; p < le;) {
                while (p < le && (*p == ' ' || *p == ',' || *p == '(')) p++;
                const char *o = p;
                while (p < le && ident_char(*p)) p++;
                const char *oe = p, *al = o, *ae = oe;
                if (le - p > 4 && !memcmp(p, " as ", 4)) {
                    al = p + 4, ae = al;
                    while (ae < le && ident_char(*ae)) ae++;
                    p = ae;
                }
                if ((size_t)(ae - al) == n && !memcmp(al, name, n) && oe > o) {
                    int w = snprintf(out, cap, "%.*s.%.*s", (int)(me - m), m, (int)(oe - o), o);
                    return w > 0 && (size_t)w < cap && m[0] != '.';
                }
                if (p == o) p++;
            }
        }
    }
    return false;
}

/* text_import_scan once per name (its answer depends on the name alone) */
static bool text_import(const ty *y, const char *name, size_t n, char *out, size_t cap) {
    if (!y->memo->imports_done) make_import_lines(y);
    if (y->memo->imports.len <= 8) return text_import_scan(y, name, n, out, cap); /* cheaper than the memo */
    uint64_t h = fact_hash(K_IMPORT, name, n, 0, 0, 0, 0, false);
    fact *f = fact_find(y->memo, K_IMPORT, name, n, 0, 0, 0, 0, false, h);
    if (!f) {
        char buf[256];
        bool r = text_import_scan(y, name, n, buf, sizeof buf);
        f = fact_add(y->memo, K_IMPORT, name, n, 0, 0, 0, 0, false, h);
        f->result = r;
        f->qual = ut_strdup(r ? buf : "");
    }
    if (!f->result) return false;
    snprintf(out, cap, "%s", f->qual);
    return true;
}

/* The qualified name a dotted chain stands for through the file's imports (`nn.Linear` -> `torch.nn.Linear`). */
static bool qualify(const ty *y, const char *c, size_t n, char *out, size_t cap) {
    size_t root = 0;
    while (root < n && c[root] != '.') root++;
    bool bound = false;
    const char *q = y->scope ? an_pyscope_lookup(y->scope, c, root, &bound) : NULL;
    char buf[256];
    if (!q && text_import(y, c, root, buf, sizeof buf)) q = buf;
    if (!q) return false;
    int w = snprintf(out, cap, "%s%.*s", q, (int)(n - root), c + root);
    return w > 0 && (size_t)w < cap;
}

static bool torch_callable(const char *q) {
    static const char *const no[] = {"torch.cuda.", "torch.device", "torch.Generator", "torch.utils.", "torch.distributed.",
                                     "torch.backends.", "torch.version", "torch.accelerator.", "torch.xpu.", "torch.mps.",
                                     "torch.dtype", "torch.Size", "torch.compile", NULL};
    if (strncmp(q, "torch.", 6) && strncmp(q, "torchvision.models.", 19) && strncmp(q, "torchvision.ops.", 16)) return false;
    for (int i = 0; no[i]; i++)
        if (!strncmp(q, no[i], strlen(no[i]))) return false;
    return true;
}

/* Methods and attributes that only torch tensors and modules have among objects with a `.cuda()` method (numpy
 * arrays and the like have no `.cuda()`; a value that has both is a torch value). Storages have some of them
 * (`.float()`, `.size()`) and are kept apart by name (see storage_like). */
static bool in_set(const char *const *set, const char *m, size_t n) {
    for (int i = 0; set[i]; i++)
        if (set[i][0] == (n ? m[0] : 0) && strlen(set[i]) == n && !memcmp(set[i], m, n)) return true;
    return false;
}

/* called on a value, their result is a torch value again (so `x.float().cuda()` has a torch receiver) */
static const char *const torch_result_methods[] = {
    "float", "half", "bfloat16", "double", "long", "unsqueeze", "squeeze", "permute", "contiguous", "type_as",
    "detach", "clone", "view", "view_as", "transpose", "flatten", "reshape", "eval", "train", "requires_grad_",
    "expand", "expand_as", "masked_fill", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor",
    "pin_memory", NULL};
/* other uses that say the same of the name they are used on */
static const char *const torch_use_names[] = {
    "size", "dim", "numel", "shape", "dtype", "is_cuda", "element_size", "is_contiguous", "requires_grad",
    "parameters", "named_parameters", "state_dict", "load_state_dict", "modules", "named_modules", "children",
    "buffers", "named_buffers", "register_buffer", "zero_grad", "register_forward_hook", NULL};

static bool torch_use(const char *m, size_t n) {
    return in_set(torch_result_methods, m, n) || in_set(torch_use_names, m, n);
}

static bool is_module_base(const ty *y, const char *c, size_t n, int depth);

/* Every `class NAME` of the file (`class ` at the start or after white space, NAME the identifier after it, not
 * ending the file) by NAME: fact K_CLASSDEF, the positions where NAME ends ascending in occs. Made once, so that
 * the question for each called name does not scan the file. */
static void make_classes(const ty *y) {
    an_types *mm = y->memo;
    mm->classes_done = true;
    for (const char *m = y->t; (m = ut_memmem(m, (size_t)(y->t + y->len - m), "class ", 6)); m++) {
        const char *p = m + 6;
        if (m > y->t && !isspace((unsigned char)m[-1])) continue;
        while (*p == ' ') p++;
        const char *e = p;
        while (e < y->t + y->len && ident_char(*e)) e++;
        if (e == p || e >= y->t + y->len) continue;
        uint64_t h = fact_hash(K_CLASSDEF, p, (size_t)(e - p), 0, 0, 0, 0, false);
        fact *f = fact_find(mm, K_CLASSDEF, p, (size_t)(e - p), 0, 0, 0, 0, false, h);
        if (!f) f = fact_add(mm, K_CLASSDEF, p, (size_t)(e - p), 0, 0, 0, 0, false, h);
        ut_vec_push(&f->occs, ((occ){(uint32_t)(e - y->t), 0}));
    }
}

/* `class NAME(...Module...):` in this file, deriving from torch.nn.Module (or from such a class of the file). */
static bool module_class_scan(const ty *y, const char *name, size_t n, int depth) {
    if (!y->memo->classes_done) make_classes(y);
    uint64_t h = fact_hash(K_CLASSDEF, name, n, 0, 0, 0, 0, false);
    const fact *cf = fact_find(y->memo, K_CLASSDEF, name, n, 0, 0, 0, 0, false, h);
    for (size_t ci = 0; cf && ci < cf->occs.len; ci++) {
        const char *p = y->t + cf->occs.items[ci].p;
        while (*p == ' ') p++;
        if (*p != '(') continue;
        p++;
        /* each base */
        for (;;) {
            while (*p == ' ' || *p == '\n') p++;
            const char *b = p;
            while (p < y->t + y->len && chain_char(*p)) p++;
            if (p > b && is_module_base(y, b, (size_t)(p - b), depth + 1)) return true;
            while (p < y->t + y->len && *p != ',' && *p != ')' && *p != '\n') p++;
            if (p >= y->t + y->len || *p != ',') break;
            p++;
        }
    }
    return false;
}

static bool module_class(const ty *y, const char *name, size_t n, int depth) {
    if (depth > MAX_DEPTH) return false;
    uint64_t h = fact_hash(K_CLASS, name, n, depth, 0, 0, 0, false);
    fact *f = fact_find(y->memo, K_CLASS, name, n, depth, 0, 0, 0, false, h);
    if (f) return f->result;
    bool r = module_class_scan(y, name, n, depth);
    f = fact_add(y->memo, K_CLASS, name, n, depth, 0, 0, 0, false, h);
    f->result = r;
    return r;
}

static bool is_module_base(const ty *y, const char *c, size_t n, int depth) {
    char q[256];
    if (qualify(y, c, n, q, sizeof q)) return !strncmp(q, "torch.nn.", 9) || !strncmp(q, "torchvision.models.", 19);
    return !memchr(c, '.', n) && module_class(y, c, n, depth);
}

static bool name_is_torch(const ty *y, uint32_t s, uint32_t e, uint32_t at, int depth);

/* The expression text[s, e) is a torch value. */
static bool expr_is_torch(const ty *y, uint32_t s, uint32_t e, uint32_t at, int depth) {
    if (depth > MAX_DEPTH) return false;
    s = skip_ws(y, s, e), e = trim_end(y, s, e);
    if (s >= e) return false;
    const char *t = y->t;
    if (t[e - 1] == ')') { /* a call: the callee before its argument list */
        int d = 0;
        uint32_t p = e;
        while (p > s) {
            p--;
            if (t[p] == ')') d++;
            else if (t[p] == '(' && --d == 0) break;
        }
        if (d != 0) return false;
        uint32_t ce = p, cs = ce;
        while (cs > s && chain_char(t[cs - 1])) cs--;
        if (cs == ce) return false;
        if (cs > s) { /* `(expr).float()` or `f(x).cuda()`: a method of a call's result */
            if (t[cs] != '.' ) return false;
            if (in_set(torch_result_methods, t + cs + 1, ce - cs - 1)) return true;
            uint32_t me = cs; /* the object ends where the method name starts */
            return expr_is_torch(y, s, me, at, depth + 1);
        }
        char q[256];
        if (qualify(y, t + cs, ce - cs, q, sizeof q)) return torch_callable(q);
        const char *dot = memchr(t + cs, '.', ce - cs);
        if (!dot) return module_class(y, t + cs, ce - cs, depth + 1); /* `Net(...)` */
        /* `x.float()`, `model.eval()`: a method called on a known value, or one only torch values have */
        const char *last = t + ce;
        while (last > t + cs && last[-1] != '.') last--;
        if (in_set(torch_result_methods, last, (size_t)(t + ce - last))) return true;
        return name_is_torch(y, cs, (uint32_t)(last - 1 - t), at, depth + 1);
    }
    for (uint32_t i = s; i < e; i++)
        if (!chain_char(t[i])) return false;
    return name_is_torch(y, s, e, at, depth + 1);
}

static uint32_t indent_at(const ty *y, uint32_t ls);

static bool blank_line(const ty *y, uint32_t ls, uint32_t in) {
    char c = y->t[ls + in];
    return c == '\n' || c == '#' || c == '\r';
}

/* m->up: for each line, the previous line that is not blank and is indented less (a stack of such lines, indents
 * strictly rising: the previous smaller element); what a walk back line by line finds, in one pass */
static void make_up(const ty *y) {
    an_types *m = y->memo;
    m->up = ut_malloc(m->nlines * sizeof *m->up);
    uint32_t *st = ut_malloc(m->nlines * sizeof *st), *sin = ut_malloc(m->nlines * sizeof *sin);
    size_t sn = 0;
    for (size_t i = 0; i < m->nlines; i++) {
        uint32_t in = indent_at(y, m->lines[i]);
        size_t a = 0, b = sn; /* the stack's lines indented less than in: [0, a) */
        while (a < b) {
            size_t mid = (a + b) / 2;
            if (sin[mid] < in) a = mid + 1;
            else b = mid;
        }
        m->up[i] = a ? st[a - 1] : UINT32_MAX;
        if (!blank_line(y, m->lines[i], in)) st[a] = (uint32_t)i, sin[a] = in, sn = a + 1;
    }
    ut_free(st), ut_free(sin);
}

/* the index of the line holding p (the last line start at or before it) */
static size_t line_of(const ty *y, uint32_t p) {
    an_types *m = y->memo;
    if (!m->lines) {
        size_t n = 1;
        for (const char *q = y->t; (q = memchr(q, '\n', (size_t)(y->t + y->len - q))); q++) n++;
        m->lines = ut_malloc(n * sizeof *m->lines);
        m->lines[0] = 0, m->nlines = 1;
        for (const char *q = y->t; (q = memchr(q, '\n', (size_t)(y->t + y->len - q))); q++)
            m->lines[m->nlines++] = (uint32_t)(q - y->t) + 1;
        make_up(y);
    }
    size_t a = 0, b = m->nlines; /* the first line starting after p, less one */
    while (a < b) {
        size_t mid = (a + b) / 2;
        if (m->lines[mid] <= p) a = mid + 1;
        else b = mid;
    }
    return a - 1;
}

static uint32_t line_start(const ty *y, uint32_t p) {
    size_t i = line_of(y, p);
    return y->memo->lines[i];
}

static uint32_t indent_at(const ty *y, uint32_t ls) {
    uint32_t i = ls;
    while (i < y->len && (y->t[i] == ' ' || y->t[i] == '\t')) i++;
    return i - ls;
}

/* A def's header end and body end, from its line s (indent in): kept per def (fact K_DEF). */
static void def_extent(const ty *y, uint32_t s, uint32_t in, uint32_t *hi, uint32_t *hdr_end) {
    uint64_t h = fact_hash(K_DEF, "", 0, 0, s, 0, 0, false);
    fact *f = fact_find(y->memo, K_DEF, "", 0, 0, s, 0, 0, false, h);
    if (f) {
        *hi = f->hi_v, *hdr_end = f->hdr_v;
        return;
    }
    /* the header ends at the `:` closing the parameter list */
    int d = 0;
    uint32_t q = s + in;
    for (; q < y->len; q++) {
        if (y->t[q] == '(') d++;
        else if (y->t[q] == ')') d--;
        else if (y->t[q] == ':' && d == 0) break;
    }
    *hdr_end = q;
    /* the body: lines indented more than the def */
    uint32_t e = q;
    while (e < y->len) {
        const char *nl = memchr(y->t + e, '\n', y->len - e);
        if (!nl) { e = y->len; break; }
        e = (uint32_t)(nl - y->t) + 1;
        uint32_t i2 = indent_at(y, e);
        char c = e + i2 < y->len ? y->t[e + i2] : '\n';
        if (c != '\n' && c != '\r' && c != '#' && i2 <= in) break;
    }
    *hi = e;
    f = fact_add(y->memo, K_DEF, "", 0, 0, s, 0, 0, false, h);
    f->hi_v = e, f->hdr_v = q;
}

/* The enclosing `def` of the line holding at: [*lo, *hi) its text, *hdr_end where its header ends. False: none. */
static bool enclosing_def(const ty *y, uint32_t at, uint32_t *lo, uint32_t *hi, uint32_t *hdr_end) {
    size_t li = line_of(y, at);
    const uint32_t *L = y->memo->lines;
    while ((li = y->memo->up[li]) != UINT32_MAX) { /* each line before at's indented less than the last */
        uint32_t s = L[li];
        uint32_t in = indent_at(y, s);
        const char *p = y->t + s + in;
        if (!strncmp(p, "def ", 4) || !strncmp(p, "async def ", 10)) {
            *lo = s;
            def_extent(y, s, in, hi, hdr_end);
            return true;
        }
        if (!strncmp(p, "class ", 6)) return false;
    }
    return false;
}

/* Every chain start of the file (a byte that may begin an identifier, after none of [A-Za-z0-9_.]) by the
 * identifier that begins there: fact K_WORD per identifier, its positions ascending in occs. Made once. */
static void make_words(const ty *y) {
    an_types *m = y->memo;
    m->words_done = true;
    const char *t = y->t;
    for (uint32_t i = 0; i < y->len;) {
        if (!ident_char(t[i]) || (i > 0 && chain_char(t[i - 1]))) {
            i++;
            continue;
        }
        uint32_t j = i;
        while (j < y->len && ident_char(t[j])) j++;
        uint64_t h = fact_hash(K_WORD, t + i, j - i, 0, 0, 0, 0, false);
        fact *f = fact_find(m, K_WORD, t + i, j - i, 0, 0, 0, 0, false, h);
        if (!f) f = fact_add(m, K_WORD, t + i, j - i, 0, 0, 0, 0, false, h);
        ut_vec_push(&f->occs, ((occ){i, 0}));
        i = j;
    }
}

/* The occurrences of w[0, n) (a dotted chain) at p in [lo, hi) with p + n <= hi, ascending: what a memmem loop
 * over text[lo, hi) finds, less those that start after one of [A-Za-z0-9_.] (every caller skips those). From the
 * word index when w begins with an identifier, else by memmem. */
typedef struct {
    const ty *y;
    const char *w;
    size_t n;
    uint32_t hi;
    const occ *pos; /* NULL: memmem from m */
    size_t i, np;
    const char *m;
} occ_it;

static void occ_begin(occ_it *it, const ty *y, const char *w, size_t n, uint32_t lo, uint32_t hi) {
    *it = (occ_it){y, w, n, hi, NULL, 0, 0, y->t + lo};
    size_t hn = 0;
    while (hn < n && ident_char(w[hn])) hn++;
    if (!hn || (hn < n && w[hn] != '.')) return; /* not an identifier first: memmem */
    static const occ none[1];
    if (!y->memo->words_done) make_words(y);
    uint64_t h = fact_hash(K_WORD, w, hn, 0, 0, 0, 0, false);
    fact *f = fact_find(y->memo, K_WORD, w, hn, 0, 0, 0, 0, false, h);
    it->pos = f ? f->occs.items : none;
    it->np = f ? f->occs.len : 0;
    size_t a = 0, b = it->np;
    while (a < b) {
        size_t mid = (a + b) / 2;
        if (it->pos[mid].p < lo) a = mid + 1;
        else b = mid;
    }
    it->i = a;
}

static bool occ_next(occ_it *it, uint32_t *p) {
    const char *t = it->y->t;
    if (!it->pos) {
        if (it->m >= t + it->hi || !(it->m = ut_memmem(it->m, (size_t)(t + it->hi - it->m), it->w, it->n))) return false;
        *p = (uint32_t)(it->m - t);
        it->m++;
        return true;
    }
    while (it->i < it->np) {
        uint32_t q = it->pos[it->i++].p;
        if (q >= it->hi) return false;
        if (q + it->n > it->hi || memcmp(t + q, it->w, it->n)) continue;
        *p = q;
        return true;
    }
    return false;
}

/* text[s, s + n) is assigned a torch.utils.data.DataLoader(...) at the start of a line somewhere in the file:
 * kept per name (fact K_LOADER) */
static bool loader_assigned(const ty *y, uint32_t s, size_t n) {
    const char *t = y->t;
    uint64_t h = fact_hash(K_LOADER, t + s, n, 0, 0, 0, 0, false);
    fact *f = fact_find(y->memo, K_LOADER, t + s, n, 0, 0, 0, 0, false, h);
    if (f) return f->result;
    bool r = false;
    occ_it it;
    occ_begin(&it, y, t + s, n, 0, y->len);
    for (uint32_t p; !r && occ_next(&it, &p);) {
        if ((p > 0 && chain_char(t[p - 1])) || ident_char(t[p + n])) continue;
        uint32_t a = skip_ws(y, p + (uint32_t)n, y->len);
        if (t[a] != '=' || t[a + 1] == '=') continue;
        uint32_t ls2 = line_start(y, p);
        if (skip_ws(y, ls2, p) != p) continue;
        a = skip_ws(y, a + 1, y->len);
        uint32_t c = a;
        while (c < y->len && chain_char(t[c])) c++;
        char q[256];
        if (c > a && t[c] == '(' && qualify(y, t + a, c - a, q, sizeof q) &&
            (!strcmp(q, "torch.utils.data.DataLoader") || !strcmp(q, "torch.utils.data.dataloader.DataLoader")))
            r = true;
    }
    f = fact_add(y->memo, K_LOADER, t + s, n, 0, 0, 0, 0, false, h);
    f->result = r;
    return r;
}

/* `for a, b in loader:` with loader built by torch.utils.data.DataLoader (possibly through enumerate/tqdm) */
static bool loop_over_loader(const ty *y, uint32_t ls, uint32_t le, int depth) {
    const char *t = y->t;
    uint32_t i = skip_ws(y, ls, le);
    if (le - i < 4 || memcmp(t + i, "for ", 4)) return false;
    const char *in = NULL;
    for (const char *p = t + i; p + 4 <= t + le; p++)
        if (!memcmp(p, " in ", 4)) { in = p + 4; break; }
    if (!in) return false;
    uint32_t s = (uint32_t)(in - t), e = le;
    while (e > s && (isspace((unsigned char)t[e - 1]) || t[e - 1] == ':')) e--;
    /* enumerate(x) / tqdm(x, ...) / iter(x): the first argument */
    for (int k = 0; k < 2; k++) {
        static const char *const wrap[] = {"enumerate(", "tqdm(", "tqdm.tqdm(", "iter(", NULL};
        for (int w = 0; wrap[w]; w++) {
            size_t wl = strlen(wrap[w]);
            if (e - s > wl && !memcmp(t + s, wrap[w], wl)) {
                s += (uint32_t)wl;
                uint32_t q = s;
                int d = 0;
                while (q < e && !((t[q] == ',' || t[q] == ')') && d == 0)) {
                    if (t[q] == '(') d++;
                    if (t[q] == ')') d--;
                    q++;
                }
                e = q;
                break;
            }
        }
    }
    for (uint32_t k = s; k < e; k++)
        if (!chain_char(t[k])) return false;
    if (s == e) return false;
    /* the loader's assignment */
    (void)depth;
    return loader_assigned(y, s, e - s);
}

/* A storage (`lambda storage, loc: storage.cuda()` in a map_location): it has `.cuda()`, `.float()` and `.size()`
 * like a tensor, but its `.to()` takes the device by keyword only. */
static bool storage_like(const char *c, size_t n) {
    for (size_t i = 0; i + 7 <= n; i++)
        if (!strncasecmp(c + i, "storage", 7)) return true;
    return false;
}

/* The name is bound on the line of the use by a lambda or a comprehension (`lambda x: x.cuda()`, `[v.cuda() for v
 * in vs]`): its uses elsewhere in the scope are another variable's. */
static bool bound_here(const ty *y, uint32_t s, uint32_t e, uint32_t at) {
    const char *t = y->t;
    size_t n = e - s;
    /* the statement around the use: back to a line break outside brackets, on to one. A walk byte by byte stops
     * at the first line break whose bracket depth from at is right; with the brackets' prefix sums (bal) that is
     * the nearest line start (or line end) whose sum compares right with at's, found line by line (a walk through
     * a 1 MB line for each use would make a dense line quadratic) */
    an_types *m = y->memo;
    size_t li = line_of(y, at);
    if (!m->bal) {
        m->bal = ut_malloc(((size_t)y->len + 1) * sizeof *m->bal);
        int32_t b = 0;
        for (uint32_t i = 0; i < y->len; i++) {
            m->bal[i] = b;
            char ch = t[i];
            if (ch == '(' || ch == '[' || ch == '{') b++;
            else if (ch == ')' || ch == ']' || ch == '}') b--;
        }
        m->bal[y->len] = b;
    }
    int32_t ba = m->bal[at];
    uint32_t ls = 0, le = y->len;
    for (size_t k = li + 1; k-- > 1;) /* closers less openers in [L, at) >= 0 */
        if (m->lines[k] <= at && m->bal[m->lines[k]] >= ba) {
            ls = m->lines[k];
            break;
        }
    for (size_t k = li + 1; k < m->nlines; k++) /* openers less closers in [at, nl) <= 0, nl the '\n' */
        if (m->bal[m->lines[k] - 1] <= ba) {
            le = m->lines[k] - 1;
            break;
        }
    occ_it it;
    occ_begin(&it, y, t + s, n, ls, le);
    for (uint32_t i; occ_next(&it, &i);) {
        if ((i > 0 && chain_char(t[i - 1])) || (i + n < y->len && ident_char(t[i + n]))) continue;
        /* a target list: only names, commas, spaces and brackets back to `for ` or `lambda ` */
        uint32_t j = i;
        while (j > ls && (t[j - 1] == ' ' || t[j - 1] == ',' || t[j - 1] == '(' || ident_char(t[j - 1]))) {
            if (j - ls >= 4 && !memcmp(t + j - 4, "for ", 4) && (j - 4 == ls || !ident_char(t[j - 5]))) {
                if (ut_memmem(t + i, le - i, " in ", 4)) return true;
                break;
            }
            if (j - ls >= 7 && !memcmp(t + j - 7, "lambda ", 7) && (j - 7 == ls || !ident_char(t[j - 8]))) {
                if (memchr(t + i, ':', le - i)) return true;
                break;
            }
            j--;
        }
    }
    return false;
}

/* The name is a module or a name imported into the file (`tvm.cuda(0)` makes a TVM device). */
static bool imported_name(const ty *y, const char *c, size_t n) {
    size_t root = 0;
    while (root < n && c[root] != '.') root++;
    if (root != n) return false;
    bool bound = false;
    char buf[256];
    return (y->scope && an_pyscope_lookup(y->scope, c, root, &bound)) || text_import(y, c, root, buf, sizeof buf);
}

/* Some use of the name in [lo, hi) is a torch-only method or attribute, directly or after `.cuda(...)` / `.to(...)`
 * (`x.size(0)`, `model.eval()`, `m.cuda().half()`). */
static bool used_as_torch(const ty *y, uint32_t s, uint32_t e, uint32_t lo, uint32_t hi) {
    const char *t = y->t;
    size_t n = e - s;
    occ_it it; /* the name's occurrences from the word index, not a search through the scope */
    occ_begin(&it, y, t + s, n, lo, hi);
    for (uint32_t p; occ_next(&it, &p);) {
        if ((p > 0 && chain_char(t[p - 1])) || (p + n < y->len && ident_char(t[p + n]))) continue;
        uint32_t q = p + (uint32_t)n;
        for (int hop = 0; hop < 3; hop++) {
            if (q >= hi || t[q] != '.') break;
            uint32_t a = q + 1, b = a;
            while (b < hi && ident_char(t[b])) b++;
            if (b == a) break;
            if (torch_use(t + a, b - a)) return true;
            /* through `.cuda(...)` and `.to(...)`: the same value */
            bool through = (b - a == 4 && !memcmp(t + a, "cuda", 4)) || (b - a == 2 && !memcmp(t + a, "to", 2));
            if (!through || b >= hi || t[b] != '(') break;
            int d = 0;
            for (q = b; q < hi; q++) {
                if (t[q] == '(') d++;
                else if (t[q] == ')' && --d == 0) { q++; break; }
            }
        }
    }
    return false;
}


/* What each occurrence of text[s, s + n) in [lo, hi) says about the name (hdr: where the parameters of the
 * enclosing def end, when in_def): an assignment whose value is known or not, an annotated or plain parameter, a
 * DataLoader loop. Independent of which occurrence asks, so kept per name and scope (fact K_NAME). */
static void name_occurrences(const ty *y, uint32_t s, size_t n, uint32_t lo, uint32_t hi, uint32_t hdr, bool in_def,
                             int depth, fact *f) {
    const char *t = y->t;
    occ_it it;
    occ_begin(&it, y, t + s, n, lo, hi);
    for (uint32_t p; occ_next(&it, &p);) {
        const char *m = t + p;
        if ((p > 0 && chain_char(t[p - 1])) || (p + n < y->len && ident_char(t[p + n]))) continue;
        int c = 0;
        size_t li = line_of(y, p); /* the line [ls, le): from the line index, not a search to its end */
        uint32_t ls = y->memo->lines[li];
        uint32_t le = li + 1 < y->memo->nlines ? y->memo->lines[li + 1] - 1 : y->len;
        uint32_t a = skip_ws(y, p + (uint32_t)n, le);
        if (in_def && p < hdr) { /* a parameter: its annotation */
            if (a < le && t[a] == ':') {
                uint32_t b = skip_ws(y, a + 1, le), c2 = b;
                while (c2 < le && chain_char(t[c2])) c2++;
                char q[256];
                if (c2 > b && qualify(y, t + b, c2 - b, q, sizeof q) &&
                    (!strcmp(q, "torch.Tensor") || !strncmp(q, "torch.nn.", 9)))
                    c = 1;
                else c = -1;
            } else {
                c = -1;
            }
        } else if (skip_ws(y, ls, p) == p && a < le && t[a] == '=' && t[a + 1] != '=') { /* `NAME = RHS` */
            uint32_t rs = a + 1, re = le;
            /* a value continued on the next lines (an open bracket) */
            int d = 0;
            for (uint32_t k = rs; k < y->len; k++) {
                char ch = t[k];
                if (ch == '(' || ch == '[' || ch == '{') d++;
                else if (ch == ')' || ch == ']' || ch == '}') d--;
                else if (ch == '\n' && d <= 0) { re = k; break; }
                re = k + 1;
            }
            uint32_t r0 = skip_ws(y, rs, re);
            /* `x = x.cuda()`, `x = x.float()`: a method of the value itself keeps what it is */
            if (re - r0 > n && !memcmp(t + r0, t + s, n) && t[r0 + n] == '.') c = 0;
            else c = expr_is_torch(y, rs, re, p, depth + 1) ? 1 : -1;
        } else if (loop_over_loader(y, ls, le, depth)) { /* `for x, y in loader:` */
            const char *in = ut_memmem(t + ls, le - ls, " in ", 4);
            if (in && m < in) c = 1;
        }
        if (!c) continue;
        if (c > 0) f->known++;
        else f->unknown++;
        ut_vec_push(&f->occs, ((occ){p, (int8_t)c}));
    }
}

/* A name (or `self.attr`) holds a torch value: every assignment of it in its scope does, or its annotation says
 * so, or it is a batch of a DataLoader loop (the occurrence at s itself not counted). */
static bool name_is_torch(const ty *y, uint32_t s, uint32_t e, uint32_t at, int depth) {
    if (depth > MAX_DEPTH || e <= s) return false;
    const char *t = y->t;
    size_t n = e - s;
    bool self_attr = n > 5 && !memcmp(t + s, "self.", 5);
    uint32_t lo = 0, hi = y->len, hdr = 0;
    bool in_def = !self_attr && enclosing_def(y, at, &lo, &hi, &hdr);
    if (!in_def) lo = 0, hi = y->len, hdr = 0;
    uint64_t h = fact_hash(K_NAME, t + s, n, depth, lo, hi, hdr, in_def);
    fact *f = fact_find(y->memo, K_NAME, t + s, n, depth, lo, hi, hdr, in_def, h);
    if (!f) {
        /* computed before it is added: the occurrences' values may ask about other names (never this one at this
         * depth: each step deeper) */
        fact tmp = {0};
        name_occurrences(y, s, n, lo, hi, hdr, in_def, depth, &tmp);
        f = fact_add(y->memo, K_NAME, t + s, n, depth, lo, hi, hdr, in_def, h);
        f->known = tmp.known, f->unknown = tmp.unknown, f->occs = tmp.occs;
    }
    int known = f->known, unknown = f->unknown;
    /* the occurrence at s: binary search (occurrences ascend) */
    size_t a = 0, b = f->occs.len;
    while (a < b) {
        size_t mid = (a + b) / 2;
        if (f->occs.items[mid].p < s) a = mid + 1;
        else b = mid;
    }
    if (a < f->occs.len && f->occs.items[a].p == s) {
        if (f->occs.items[a].c > 0) known--;
        else unknown--;
    }
    if (known > 0 && unknown == 0) return true;
    /* otherwise what the name is used for in the same scope: a value with a `.cuda()` method that is also used as
     * a tensor or module (`x.size()`, `model.eval()`, `model.cuda().half()`) is one */
    if (storage_like(t + s, n) || bound_here(y, s, e, at) || imported_name(y, t + s, n)) return false;
    if (!f->used) f->used = used_as_torch(y, s, e, lo, hi) ? 1 : -1; /* the name's in its scope: asked once */
    return f->used > 0;
}

bool an_types_torch(an_types *m, uint32_t start, uint32_t end, uint32_t at) {
    const char *text = m->t;
    uint32_t len = m->len;
    ty y = {m->t, m->len, m->scope, m};
    if (expr_is_torch(&y, start, end, at, 0)) return true;
    /* what the call's result is used for: `x[0].cuda().float()`, `lpips.LPIPS().cuda().eval()` */
    if (end >= len || text[end] != '.' || storage_like(text + start, end - start)) return false;
    uint32_t a = end + 1, b = a;
    while (b < len && ident_char(text[b])) b++;
    if (b - a != 4 || memcmp(text + a, "cuda", 4)) return false;
    uint32_t q = b;
    while (q < len && (text[q] == ' ' || text[q] == '\t')) q++;
    if (q >= len || text[q] != '(') return false;
    for (int d = 0; q < len; q++) {
        if (text[q] == '(') d++;
        else if (text[q] == ')' && --d == 0) { q++; break; }
    }
    if (q >= len || text[q] != '.') return false;
    a = q + 1, b = a;
    while (b < len && ident_char(text[b])) b++;
    return b > a && torch_use(text + a, b - a);
}

/* ---- receivers of unknown type (see an_types.h and rule XPU101's doc) ------------------------------------------ */

/* Frameworks with objects whose `.cuda()` is not torch's (another framework's tensor, a device constructor): a
 * project that imports one anywhere keeps every unknown receiver unsafe, as such objects may reach any file through
 * the project's functions. (CUDA libraries such as cupy, numba or pycuda have no `.cuda()` method on their objects;
 * a file that imports them is still kept apart by imports_known.) */
static const char *const cuda_elsewhere[] = {"paddle", "oneflow", "jittor", "megengine", "mindspore", "tvm",
                                             "dgl", "theano", "chainer", "cntk", NULL};

/* Libraries whose objects with a `.cuda()` method are torch values or treat `.to(DEV)` the same (their own module
 * classes override both alike), and libraries with no `.cuda()` at all; the standard library too (an_pystdlib). A
 * file that imports anything else (but its own project's modules) keeps its unknown receivers unsafe. */
static const char *const cuda_as_torch[] = {
    /* torch and its ecosystem */
    "torch", "torchvision", "torchaudio", "torchtext", "torchdata", "torchmetrics", "functorch", "transformers",
    "diffusers", "accelerate", "peft", "timm", "lpips", "open_clip", "clip", "fairseq", "detectron2", "fvcore",
    "iopath", "lightning", "pytorch_lightning", "lightning_fabric", "lightning_utilities", "deepspeed", "apex",
    "xformers", "bitsandbytes", "safetensors", "einops", "kornia", "torch_geometric", "sentence_transformers",
    "trl", "unsloth", "unsloth_zoo", "triton", "huggingface_hub", "datasets", "tokenizers", "sentencepiece",
    /* libraries without a `.cuda()` method */
    "numpy", "scipy", "pandas", "sklearn", "PIL", "cv2", "imageio", "skimage", "matplotlib", "mpl_toolkits",
    "seaborn", "tqdm", "typing_extensions",
    "yaml", "omegaconf", "hydra", "tensorboard", "tensorboardX", "wandb", "mlflow", "pytest", "hypothesis",
    "packaging", "requests", "regex", "editdistance", "sacrebleu", "sacremoses", "psutil", "soundfile", "librosa",
    "h5py", "joblib", "faiss", "rich", "typer", "click", "filelock", "fsspec", "setuptools", "pkg_resources",
    "jsonargparse", "termcolor", "tabulate", "pycocotools", "lmdb", "nltk", "gradio", "fire", "absl", "mock",
    "parameterized", "pydantic", "attr", "attrs", "cloudpickle", "dill", "msgpack", "tiktoken", "jinja2",
    "bitarray", "pyarrow", "boto3", "torchsnapshot", NULL};

static bool listed(const char *const *set, const char *m, size_t n) { return in_set(set, m, n); }

/* Every absolute import of the file names a library of cuda_as_torch or a module of the project (p); a library of
 * cuda_elsewhere or any other one: false, its top-level name into why. */
static bool imports_known(const ty *y, const an_project *p, const char *helper, char *why, size_t cap) {
    const char *t = y->t, *end = t + y->len;
    for (const char *ls = t; ls < end;) {
        const char *le = memchr(ls, '\n', (size_t)(end - ls));
        if (!le) le = end;
        const char *b = ls;
        while (b < le && (*b == ' ' || *b == '\t')) b++;
        const char *names = NULL;
        if (le - b > 7 && !memcmp(b, "import ", 7)) names = b + 7;
        else if (le - b > 5 && !memcmp(b, "from ", 5) && ut_memmem(b, (size_t)(le - b), " import", 7)) names = b + 5;
        /* `import a, b.c as d`: each top-level name; `from .x import y`: the project's own */
        for (const char *q = names; q && q < le;) {
            while (q < le && (*q == ' ' || *q == ',' || *q == '(')) q++;
            if (q >= le || *q == '.' || *q == '#') break;
            const char *e = q;
            while (e < le && ident_char(*e)) e++;
            if (e == q) break;
            size_t n = (size_t)(e - q);
            bool own_helper = helper && strlen(helper) == n && !memcmp(helper, q, n);
            if (!listed(cuda_as_torch, q, n) && !an_pystdlib_module(q, n) && !own_helper && !an_project_own_module(p, q, n)) {
                snprintf(why, cap, "%.*s", (int)n, q);
                return false;
            }
            if (names == b + 5) break; /* from X import ...: X alone */
            while (e < le && *e != ',') e++; /* past `.c as d` */
            q = e;
        }
        ls = le + 1;
    }
    return true;
}

/* imports_known once per file (its answer depends on the file, the project and the helper's name alone; a file's
 * facts are asked about with one project and one helper) */
static bool imports_known_kept(const ty *y, const an_project *p, const char *helper, char *why, size_t cap) {
    an_types *m = y->memo;
    if (!m->ik_done || m->ik_p != p || strcmp(m->ik_helper, helper)) {
        ut_free(m->ik_helper);
        m->ik_done = true, m->ik_p = p, m->ik_helper = ut_strdup(helper);
        m->ik_why[0] = 0;
        m->ik_r = imports_known(y, p, helper, m->ik_why, sizeof m->ik_why);
    }
    if (!m->ik_r) snprintf(why, cap, "%s", m->ik_why);
    return m->ik_r;
}

/* Inside the body of a method named `cuda` (an override: `super().cuda(...)` there is what `.cuda()` means). */
static bool in_cuda_method(const ty *y, uint32_t at) {
    uint32_t lo, hi, hdr;
    if (!enclosing_def(y, at, &lo, &hi, &hdr)) return false;
    uint32_t i = skip_ws(y, lo, hdr);
    if (!strncmp(y->t + i, "async ", 6)) i += 6;
    return !strncmp(y->t + i, "def cuda(", 9) || !strncmp(y->t + i, "def cuda (", 10);
}

void an_types_project_facts(const char *path, char *out, size_t n) {
    const an_project *p = path ? an_project_shared(path) : NULL;
    if (!p) {
        snprintf(out, n, "-");
        return;
    }
    unsigned mask = 0;
    for (int i = 0; cuda_elsewhere[i]; i++)
        if (an_project_imports(p, cuda_elsewhere[i])) mask |= 1u << i;
    const char *u = an_project_cuda_unlike_to(p);
    /* a test module's own names are its own where no file imports it (an_guard's stored tests) */
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t bl = strlen(b);
    bool test = !strncmp(b, "test", 4) || (bl > 8 && !strcmp(b + bl - 8, "_test.py"));
    snprintf(out, n, "%x|%016llx|%s|%c%c|%llx", mask, (unsigned long long)an_project_own_modules_hash(p), u ? u : "",
             test ? (an_project_module_imported(p, path) ? 'i' : 'n') : '-', an_project_builds_cuda_extension(p) ? 'x' : '-',
             (unsigned long long)an_project_cuda_extensions_hash(p));
}

const char *an_types_risk(an_types *m, uint32_t start, uint32_t end, uint32_t at, const char *path, const char *helper,
                          char *buf, size_t cap) {
    const char *text = m->t;
    ty y = {m->t, m->len, m->scope, m};
    if (end <= start) return "no receiver";
    if (storage_like(text + start, end - start)) return "a storage's `.to()` takes the device by keyword only";
    uint32_t root = start, chain = start;
    while (root < end && ident_char(text[root])) root++;
    while (chain < end && chain_char(text[chain])) chain++;
    if (chain == end && imported_name(&y, text + start, root - start)) /* `tvm.cuda(0)`, `mod.attr.cuda()` */
        return "the receiver is an imported module or name";
    if (in_cuda_method(&y, at)) return "an override of `cuda` itself";
    const an_project *p = path ? an_project_shared(path) : NULL;
    if (!p) return "no project model";
    for (int i = 0; cuda_elsewhere[i]; i++)
        if (an_project_imports(p, cuda_elsewhere[i])) {
            snprintf(buf, cap, "the project imports %s, whose objects have a `.cuda()` of their own", cuda_elsewhere[i]);
            return buf;
        }
    const char *unlike = an_project_cuda_unlike_to(p);
    if (unlike) {
        snprintf(buf, cap, "%s defines a `cuda` method that `.to()` may not replace", unlike);
        return buf;
    }
    char name[128];
    if (!imports_known_kept(&y, p, helper ? helper : "xpuify_device", name, sizeof name)) {
        snprintf(buf, cap, "the file imports %s, a library not known to keep `.cuda()` and `.to()` alike", name);
        return buf;
    }
    return NULL;
}

const char *an_types_unknown_risk(const char *text, uint32_t len, const an_pyscope *scope, uint32_t start,
                                  uint32_t end, uint32_t at, const char *path, const char *helper, char *buf, size_t cap) {
    an_types *m = an_types_new(text, len, scope);
    const char *r = an_types_risk(m, start, end, at, path, helper, buf, cap);
    an_types_free(m);
    return r;
}

bool an_types_is_torch(const char *text, uint32_t len, const an_pyscope *scope, uint32_t start, uint32_t end,
                       uint32_t at) {
    an_types *m = an_types_new(text, len, scope);
    bool r = an_types_torch(m, start, end, at);
    an_types_free(m);
    return r;
}
