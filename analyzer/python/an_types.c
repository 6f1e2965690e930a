/* an_types: is a receiver a torch tensor or module (see an_types.h). Expressions are read as text: a dotted chain,
 * optionally called (`torch.zeros(3)`, `Net()`, `x.float()`), or a name whose assignments, parameter annotation
 * or loop say what it holds. */
#include "analyzer/python/an_types.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 5

typedef struct {
    const char *t;
    uint32_t len;
    const an_pyscope *scope;
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
static bool text_import(const ty *y, const char *name, size_t n, char *out, size_t cap) {
    const char *t = y->t, *end = t + y->len;
    for (const char *ls = t; ls < end;) {
        const char *le = memchr(ls, '\n', (size_t)(end - ls));
        if (!le) le = end;
        size_t ll = (size_t)(le - ls);
        if (ll > 7 && !memcmp(ls, "import ", 7)) { /* import a.b as name / import name */
            const char *m = ls + 7, *me = m;
            while (me < le && chain_char(*me)) me++;
            const char *as = memmem(me, (size_t)(le - me), " as ", 4);
            const char *al = as ? as + 4 : m, *ae = as ? as + 4 : me;
            if (as) while (ae < le && ident_char(*ae)) ae++;
            if ((size_t)(ae - al) == n && !memcmp(al, name, n) && (size_t)(me - m) < cap) {
                snprintf(out, cap, "%.*s", (int)(me - m), m);
                return true;
            }
        } else if (ll > 5 && !memcmp(ls, "from ", 5)) {
            const char *m = ls + 5, *me = m;
            while (me < le && chain_char(*me)) me++;
            const char *imp = memmem(me, (size_t)(le - me), " import ", 8);
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
        ls = le + 1;
    }
    return false;
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

static bool is_module_base(const ty *y, const char *c, size_t n, int depth);

/* `class NAME(...Module...):` in this file, deriving from torch.nn.Module (or from such a class of the file). */
static bool module_class(const ty *y, const char *name, size_t n, int depth) {
    if (depth > MAX_DEPTH) return false;
    for (const char *m = y->t; (m = memmem(m, (size_t)(y->t + y->len - m), "class ", 6)); m++) {
        const char *p = m + 6;
        if (m > y->t && !isspace((unsigned char)m[-1])) continue;
        while (*p == ' ') p++;
        if ((size_t)(y->t + y->len - p) < n + 1 || memcmp(p, name, n) || ident_char(p[n])) continue;
        p += n;
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
            uint32_t me = cs; /* the object ends where the method name starts */
            return expr_is_torch(y, s, me, at, depth + 1);
        }
        char q[256];
        if (qualify(y, t + cs, ce - cs, q, sizeof q)) return torch_callable(q);
        const char *dot = memchr(t + cs, '.', ce - cs);
        if (!dot) return module_class(y, t + cs, ce - cs, depth + 1); /* `Net(...)` */
        /* `x.float()`, `model.eval()`: a method called on a known value */
        const char *last = t + ce;
        while (last > t + cs && last[-1] != '.') last--;
        return name_is_torch(y, cs, (uint32_t)(last - 1 - t), at, depth + 1);
    }
    for (uint32_t i = s; i < e; i++)
        if (!chain_char(t[i])) return false;
    return name_is_torch(y, s, e, at, depth + 1);
}

static uint32_t line_start(const char *t, uint32_t p) {
    while (p > 0 && t[p - 1] != '\n') p--;
    return p;
}

static uint32_t indent_at(const ty *y, uint32_t ls) {
    uint32_t i = ls;
    while (i < y->len && (y->t[i] == ' ' || y->t[i] == '\t')) i++;
    return i - ls;
}

/* The enclosing `def` of the line holding at: [*lo, *hi) its text, *hdr_end where its header ends. False: none. */
static bool enclosing_def(const ty *y, uint32_t at, uint32_t *lo, uint32_t *hi, uint32_t *hdr_end) {
    uint32_t ls = line_start(y->t, at), ind = indent_at(y, ls);
    for (uint32_t s = ls; s > 0 && ind > 0;) {
        s = line_start(y->t, s - 1);
        uint32_t in = indent_at(y, s);
        const char *p = y->t + s + in;
        if (in >= ind || *p == '\n' || *p == '#' || *p == '\r') continue;
        ind = in;
        if (!strncmp(p, "def ", 4) || !strncmp(p, "async def ", 10)) {
            *lo = s;
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
            return true;
        }
        if (!strncmp(p, "class ", 6)) return false;
    }
    return false;
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
    size_t n = e - s;
    for (const char *m = t; (m = memmem(m, (size_t)(t + y->len - m), t + s, n)); m++) {
        uint32_t p = (uint32_t)(m - t);
        if ((p > 0 && chain_char(t[p - 1])) || ident_char(t[p + n])) continue;
        uint32_t a = skip_ws(y, p + (uint32_t)n, y->len);
        if (t[a] != '=' || t[a + 1] == '=') continue;
        uint32_t ls2 = line_start(t, p);
        if (skip_ws(y, ls2, p) != p) continue;
        a = skip_ws(y, a + 1, y->len);
        uint32_t c = a;
        while (c < y->len && chain_char(t[c])) c++;
        char q[256];
        if (c > a && t[c] == '(' && qualify(y, t + a, c - a, q, sizeof q) &&
            (!strcmp(q, "torch.utils.data.DataLoader") || !strcmp(q, "torch.utils.data.dataloader.DataLoader")))
            return true;
    }
    (void)depth;
    return false;
}

/* A name (or `self.attr`) holds a torch value: every assignment of it in its scope does, or its annotation says
 * so, or it is a batch of a DataLoader loop. */
static bool name_is_torch(const ty *y, uint32_t s, uint32_t e, uint32_t at, int depth) {
    if (depth > MAX_DEPTH || e <= s) return false;
    const char *t = y->t;
    size_t n = e - s;
    bool self_attr = n > 5 && !memcmp(t + s, "self.", 5);
    uint32_t lo = 0, hi = y->len, hdr = 0;
    bool in_def = !self_attr && enclosing_def(y, at, &lo, &hi, &hdr);
    if (!in_def) lo = 0, hi = y->len;
    int known = 0, unknown = 0;
    for (const char *m = t + lo; m < t + hi && (m = memmem(m, (size_t)(t + hi - m), t + s, n)); m++) {
        uint32_t p = (uint32_t)(m - t);
        if ((p > 0 && chain_char(t[p - 1])) || (p + n < y->len && ident_char(t[p + n]))) continue;
        if (p == s) continue;
        uint32_t ls = line_start(t, p);
        const char *nl = memchr(t + p, '\n', y->len - p);
        uint32_t le = nl ? (uint32_t)(nl - t) : y->len;
        uint32_t a = skip_ws(y, p + (uint32_t)n, le);
        if (in_def && p < hdr) { /* a parameter: its annotation */
            if (a < le && t[a] == ':') {
                uint32_t b = skip_ws(y, a + 1, le), c = b;
                while (c < le && chain_char(t[c])) c++;
                char q[256];
                if (c > b && qualify(y, t + b, c - b, q, sizeof q) &&
                    (!strcmp(q, "torch.Tensor") || !strncmp(q, "torch.nn.", 9)))
                    known++;
                else unknown++;
            } else {
                unknown++;
            }
            continue;
        }
        if (skip_ws(y, ls, p) == p && a < le && t[a] == '=' && t[a + 1] != '=') { /* `NAME = RHS` */
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
            if (re - r0 > n && !memcmp(t + r0, t + s, n) && t[r0 + n] == '.') continue;
            if (expr_is_torch(y, rs, re, p, depth + 1)) known++;
            else unknown++;
            continue;
        }
        if (loop_over_loader(y, ls, le, depth)) { /* `for x, y in loader:` */
            const char *in = memmem(t + ls, le - ls, " in ", 4);
            if (in && m < in) known++;
        }
    }
    return known > 0 && unknown == 0;
}

bool an_types_is_torch(const char *text, uint32_t len, const an_pyscope *scope, uint32_t start, uint32_t end,
                       uint32_t at) {
    ty y = {text, len, scope};
    return expr_is_torch(&y, start, end, at, 0);
}
