/* an_types: is a receiver a torch tensor or module (see an_types.h). Expressions are read as text: a dotted chain,
 * optionally called (`torch.zeros(3)`, `Net()`, `x.float()`), or a name whose assignments, parameter annotation
 * or loop say what it holds. */
#include "analyzer/python/an_types.h"
#include "analyzer/project/an_project.h"
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

/* Methods and attributes that only torch tensors and modules have among objects with a `.cuda()` method (numpy
 * arrays and the like have no `.cuda()`; a value that has both is a torch value). Storages have some of them
 * (`.float()`, `.size()`) and are kept apart by name (see storage_like). */
static bool in_set(const char *const *set, const char *m, size_t n) {
    for (int i = 0; set[i]; i++)
        if (strlen(set[i]) == n && !memcmp(set[i], m, n)) return true;
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
    /* the statement around the use: back to a line break outside brackets, on to one */
    uint32_t ls = at, le = at;
    for (int d = 0; ls > 0; ls--) {
        char ch = t[ls - 1];
        if (ch == ')' || ch == ']' || ch == '}') d++;
        else if (ch == '(' || ch == '[' || ch == '{') d--;
        else if (ch == '\n' && d >= 0) break;
    }
    for (int d = 0; le < y->len; le++) {
        char ch = t[le];
        if (ch == '(' || ch == '[' || ch == '{') d++;
        else if (ch == ')' || ch == ']' || ch == '}') d--;
        else if (ch == '\n' && d <= 0) break;
    }
    for (uint32_t i = ls; i + n <= le; i++) {
        if (memcmp(t + i, t + s, n) || (i > 0 && chain_char(t[i - 1])) || (i + n < y->len && ident_char(t[i + n])))
            continue;
        /* a target list: only names, commas, spaces and brackets back to `for ` or `lambda ` */
        uint32_t j = i;
        while (j > ls && (t[j - 1] == ' ' || t[j - 1] == ',' || t[j - 1] == '(' || ident_char(t[j - 1]))) {
            if (j - ls >= 4 && !memcmp(t + j - 4, "for ", 4) && (j - 4 == ls || !ident_char(t[j - 5]))) {
                if (memmem(t + i, le - i, " in ", 4)) return true;
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
    for (const char *m = t + lo; m < t + hi && (m = memmem(m, (size_t)(t + hi - m), t + s, n)); m++) {
        uint32_t p = (uint32_t)(m - t);
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
    if (known > 0 && unknown == 0) return true;
    /* otherwise what the name is used for in the same scope: a value with a `.cuda()` method that is also used as
     * a tensor or module (`x.size()`, `model.eval()`, `model.cuda().half()`) is one */
    if (storage_like(t + s, n) || bound_here(y, s, e, at) || imported_name(y, t + s, n)) return false;
    return used_as_torch(y, s, e, lo, hi);
}

bool an_types_is_torch(const char *text, uint32_t len, const an_pyscope *scope, uint32_t start, uint32_t end,
                       uint32_t at) {
    ty y = {text, len, scope};
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
 * classes override both alike), and libraries with no `.cuda()` at all. A file that imports anything else (but
 * its own project's modules) keeps its unknown receivers unsafe. */
static const char *const cuda_as_torch[] = {
    /* the standard library (the modules such files import) */
    "__future__", "abc", "argparse", "array", "ast", "asyncio", "atexit", "base64", "bisect", "builtins", "bz2",
    "cProfile", "calendar", "codecs", "collections", "concurrent", "configparser", "contextlib", "copy", "csv",
    "ctypes", "dataclasses", "datetime", "decimal", "difflib", "dis", "doctest", "email", "enum", "errno",
    "fcntl", "filecmp", "fnmatch", "fractions", "functools", "gc", "getpass", "gettext", "glob", "gzip", "hashlib",
    "heapq", "hmac", "html", "http", "importlib", "inspect", "io", "ipaddress", "itertools", "json", "keyword",
    "linecache", "locale", "logging", "lzma", "marshal", "math", "mimetypes", "mmap", "multiprocessing",
    "numbers", "operator", "os", "pathlib", "pdb", "pickle", "pkgutil", "platform", "pprint", "profile", "pstats",
    "queue", "random", "re", "reprlib", "resource", "sched", "secrets", "select", "selectors", "shelve", "shlex",
    "shutil", "signal", "site", "socket", "socketserver", "sqlite3", "ssl", "stat", "statistics", "string",
    "struct", "subprocess", "sys", "sysconfig", "tarfile", "tempfile", "textwrap", "threading", "time", "timeit",
    "token", "tokenize", "traceback", "tracemalloc", "types", "typing", "typing_extensions", "unicodedata",
    "unittest", "urllib", "uuid", "warnings", "weakref", "xml", "zipfile", "zlib", "fileinput", "optparse",
    "getopt", "copyreg", "contextvars", "graphlib", "zoneinfo", "wave", "colorsys", "posixpath", "ntpath",
    /* torch and its ecosystem */
    "torch", "torchvision", "torchaudio", "torchtext", "torchdata", "torchmetrics", "functorch", "transformers",
    "diffusers", "accelerate", "peft", "timm", "lpips", "open_clip", "clip", "fairseq", "detectron2", "fvcore",
    "iopath", "lightning", "pytorch_lightning", "lightning_fabric", "lightning_utilities", "deepspeed", "apex",
    "xformers", "bitsandbytes", "safetensors", "einops", "kornia", "torch_geometric", "sentence_transformers",
    "trl", "unsloth", "unsloth_zoo", "triton", "huggingface_hub", "datasets", "tokenizers", "sentencepiece",
    /* libraries without a `.cuda()` method */
    "numpy", "scipy", "pandas", "sklearn", "PIL", "cv2", "imageio", "skimage", "matplotlib", "mpl_toolkits",
    "seaborn", "tqdm",
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
        else if (le - b > 5 && !memcmp(b, "from ", 5) && memmem(b, (size_t)(le - b), " import", 7)) names = b + 5;
        /* `import a, b.c as d`: each top-level name; `from .x import y`: the project's own */
        for (const char *q = names; q && q < le;) {
            while (q < le && (*q == ' ' || *q == ',' || *q == '(')) q++;
            if (q >= le || *q == '.' || *q == '#') break;
            const char *e = q;
            while (e < le && ident_char(*e)) e++;
            if (e == q) break;
            size_t n = (size_t)(e - q);
            bool own_helper = helper && strlen(helper) == n && !memcmp(helper, q, n);
            if (!listed(cuda_as_torch, q, n) && !own_helper && !an_project_own_module(p, q, n)) {
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
    snprintf(out, n, "%x|%016llx|%s", mask, (unsigned long long)an_project_own_modules_hash(p), u ? u : "");
}

const char *an_types_unknown_risk(const char *text, uint32_t len, const an_pyscope *scope, uint32_t start,
                                  uint32_t end, uint32_t at, const char *path, const char *helper, char *buf, size_t cap) {
    ty y = {text, len, scope};
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
    if (!imports_known(&y, p, helper ? helper : "xpuify_device", name, sizeof name)) {
        snprintf(buf, cap, "the file imports %s, a library not known to keep `.cuda()` and `.to()` alike", name);
        return buf;
    }
    return NULL;
}
