/* hv_compare: numeric-tolerant output comparison (see hv_compare.h). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "harness/hv_compare.h"
#include "util/ut_buf.h"
#include "util/ut_mem.h"
#include <errno.h>
#include <math.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- operands --------------------------------------------------------------------------------------------- */

static const struct { const char *prefix; hv_out_kind kind; } PREFIXES[] = {
    {"text:", HV_OUT_TEXT}, {"npy:", HV_OUT_NPY}, {"f32:", HV_OUT_F32}, {"f64:", HV_OUT_F64}, {"bytes:", HV_OUT_BYTES}};

bool hv_output_parse(const char *spec, hv_output *out, char **why) {
    memset(out, 0, sizeof *out);
    *why = NULL;
    if (!strcmp(spec, "stdout")) {
        out->spec = ut_strdup(spec);
        out->kind = HV_OUT_STDOUT;
        return true;
    }
    const char *path = spec;
    out->kind = HV_OUT_AUTO;
    for (size_t i = 0; i < sizeof PREFIXES / sizeof *PREFIXES; i++) {
        size_t n = strlen(PREFIXES[i].prefix);
        if (!strncmp(spec, PREFIXES[i].prefix, n)) {
            out->kind = PREFIXES[i].kind;
            path = spec + n;
            break;
        }
    }
    ut_buf b;
    ut_buf_init(&b);
    if (!*path) ut_buf_printf(&b, "`%s` names no file", spec);
    else if (path[0] == '/') ut_buf_printf(&b, "`%s`: give a path relative to the project (the runs happen in copies)", spec);
    else {
        /* no `..` component: outputs live inside the copy */
        for (const char *p = path; *p;) {
            const char *e = strchr(p, '/');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            if (n == 2 && !strncmp(p, "..", 2)) {
                ut_buf_printf(&b, "`%s`: the path leaves the project", spec);
                break;
            }
            p += n;
            while (*p == '/') p++;
        }
    }
    if (b.len) {
        *why = ut_buf_take(&b);
        return false;
    }
    ut_buf_free(&b);
    out->spec = ut_strdup(spec);
    out->path = ut_strdup(path);
    return true;
}

void hv_output_free(hv_output *o) {
    ut_free(o->spec);
    ut_free(o->path);
    memset(o, 0, sizeof *o);
}

static bool ends_with(const char *s, const char *suf) {
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcasecmp(s + n - m, suf);
}

hv_out_kind hv_output_kind_for(const hv_output *o) {
    if (o->kind != HV_OUT_AUTO) return o->kind;
    if (ends_with(o->path, ".npy")) return HV_OUT_NPY;
    if (ends_with(o->path, ".f32") || ends_with(o->path, ".float32") || ends_with(o->path, ".fp32")) return HV_OUT_F32;
    if (ends_with(o->path, ".f64") || ends_with(o->path, ".float64") || ends_with(o->path, ".fp64")) return HV_OUT_F64;
    return HV_OUT_AUTO; /* text when both are text, else bytes: decided on the contents */
}

char *hv_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    ut_buf b;
    ut_buf_init(&b);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) ut_buf_append(&b, chunk, n);
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        ut_buf_free(&b);
        errno = EIO;
        return NULL;
    }
    *len = b.len;
    if (!b.data) return ut_strdup("");
    return ut_buf_take(&b);
}

/* ---- results ---------------------------------------------------------------------------------------------- */

void hv_cmp_init(hv_cmp *c) {
    memset(c, 0, sizeof *c);
    c->equal = true;
}

void hv_cmp_free(hv_cmp *c) {
    ut_free(c->detail);
    c->detail = NULL;
}

static void differ(hv_cmp *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void differ(hv_cmp *c, const char *fmt, ...) {
    c->equal = false;
    if (c->detail) return;
    ut_buf b;
    ut_buf_init(&b);
    va_list ap;
    va_start(ap, fmt);
    ut_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    c->detail = ut_buf_take(&b);
}

void hv_cmp_merge(hv_cmp *t, const hv_cmp *one) {
    if (!one->equal) {
        t->equal = false;
        if (!t->detail && one->detail) t->detail = ut_strdup(one->detail);
    }
    t->numbers += one->numbers;
    if (one->numeric) {
        t->numeric = true;
        if (one->max_abs > t->max_abs || isnan(one->max_abs)) t->max_abs = one->max_abs;
        if (one->max_rel > t->max_rel || isnan(one->max_rel)) t->max_rel = one->max_rel;
    }
}

/* one value pair; returns whether it is within tolerance and folds the differences in */
static bool close_enough(hv_cmp *c, double a, double b, double rtol, double atol) {
    c->numbers++;
    c->numeric = true;
    if (isnan(a) || isnan(b)) {
        if (isnan(a) && isnan(b)) return true;
        c->max_abs = c->max_rel = INFINITY;
        return false;
    }
    if (isinf(a) || isinf(b)) {
        if (a == b) return true;
        c->max_abs = c->max_rel = INFINITY;
        return false;
    }
    double d = fabs(a - b);
    double rel = b != 0 ? d / fabs(b) : (d > 0 ? INFINITY : 0);
    if (d > c->max_abs) c->max_abs = d;
    if (rel > c->max_rel) c->max_rel = rel;
    return d <= atol + rtol * fabs(b);
}

/* ---- text ------------------------------------------------------------------------------------------------- */

static pcre2_code *num_re;
static pthread_once_t num_once = PTHREAD_ONCE_INIT;

static void num_init(void) {
    int ec;
    PCRE2_SIZE eo;
    /* a number not glued to a word: 12, -0.5, 1e-3, .25, nan, inf, -Infinity */
    num_re = pcre2_compile((PCRE2_SPTR) "(?<![\\w.])[-+]?(?:(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][-+]?\\d+)?|(?i:nan|inf(?:inity)?))(?!\\w)",
                           PCRE2_ZERO_TERMINATED, 0, &ec, &eo, NULL);
    if (num_re) pcre2_jit_compile(num_re, PCRE2_JIT_COMPLETE);
}

typedef struct {
    ut_buf skeleton; /* the line with each number replaced by '#' */
    UT_VEC(double) nums;
    UT_VEC(char *) texts; /* each number as written */
} line_parts;

static void parse_line(const char *s, size_t n, line_parts *lp) {
    ut_buf_clear(&lp->skeleton);
    for (size_t i = 0; i < lp->texts.len; i++) ut_free(lp->texts.items[i]);
    lp->nums.len = lp->texts.len = 0;
    pthread_once(&num_once, num_init);
    if (!num_re) {
        ut_buf_append(&lp->skeleton, s, n);
        return;
    }
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(num_re, NULL);
    size_t at = 0;
    while (at <= n && pcre2_match(num_re, (PCRE2_SPTR)s, n, at, 0, md, NULL) >= 0) {
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (ov[1] == ov[0]) break;
        ut_buf_append(&lp->skeleton, s + at, ov[0] - at);
        ut_buf_putc(&lp->skeleton, '#');
        char *t = ut_strndup(s + ov[0], ov[1] - ov[0]);
        ut_vec_push(&lp->texts, t);
        ut_vec_push(&lp->nums, strtod(t, NULL));
        at = ov[1];
    }
    if (at < n) ut_buf_append(&lp->skeleton, s + at, n - at);
    pcre2_match_data_free(md);
}

static void line_parts_free(line_parts *lp) {
    ut_buf_free(&lp->skeleton);
    for (size_t i = 0; i < lp->texts.len; i++) ut_free(lp->texts.items[i]);
    ut_vec_free(&lp->texts);
    ut_vec_free(&lp->nums);
}

typedef struct { const char *s; size_t n; } span;
typedef UT_VEC(span) span_vec;

static void split_lines(const char *s, size_t n, span_vec *out) {
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\n') continue;
        size_t e = i;
        if (e > start && s[e - 1] == '\r') e--;
        span sp = {s + start, e - start};
        ut_vec_push(out, sp);
        start = i + 1;
    }
    if (start < n) {
        size_t e = n;
        if (e > start && s[e - 1] == '\r') e--;
        span sp = {s + start, e - start};
        ut_vec_push(out, sp);
    }
}

static void show(ut_buf *b, span sp) {
    size_t n = sp.n > 100 ? 100 : sp.n;
    ut_buf_putc(b, '`');
    ut_buf_append(b, sp.s, n);
    if (n < sp.n) ut_buf_puts(b, "...");
    ut_buf_putc(b, '`');
}

static void compare_text(const char *name, const char *a, size_t alen, const char *b, size_t blen, double rtol,
                         double atol, hv_cmp *c) {
    span_vec la = {0}, lb = {0};
    split_lines(a, alen, &la);
    split_lines(b, blen, &lb);
    c->numeric = true;
    if (la.len != lb.len) differ(c, "%s: %zu lines, the reference has %zu", name, la.len, lb.len);
    line_parts pa = {0}, pb = {0};
    ut_buf_init(&pa.skeleton);
    ut_buf_init(&pb.skeleton);
    size_t n = la.len < lb.len ? la.len : lb.len;
    for (size_t i = 0; i < n; i++) {
        parse_line(la.items[i].s, la.items[i].n, &pa);
        parse_line(lb.items[i].s, lb.items[i].n, &pb);
        bool same_shape = pa.skeleton.len == pb.skeleton.len && pa.nums.len == pb.nums.len &&
                          (!pa.skeleton.len || !memcmp(pa.skeleton.data, pb.skeleton.data, pa.skeleton.len));
        if (!same_shape) {
            ut_buf m;
            ut_buf_init(&m);
            show(&m, la.items[i]);
            ut_buf_puts(&m, ", the reference has ");
            show(&m, lb.items[i]);
            differ(c, "%s line %zu: %s", name, i + 1, m.data);
            ut_buf_free(&m);
            continue;
        }
        for (size_t k = 0; k < pa.nums.len; k++)
            if (!close_enough(c, pa.nums.items[k], pb.nums.items[k], rtol, atol))
                differ(c, "%s line %zu: %s, the reference has %s (tolerance: rtol %g, atol %g)", name, i + 1,
                       pa.texts.items[k], pb.texts.items[k], rtol, atol);
    }
    line_parts_free(&pa);
    line_parts_free(&pb);
    ut_vec_free(&la);
    ut_vec_free(&lb);
}

/* ---- arrays ----------------------------------------------------------------------------------------------- */

static double half_to_double(uint16_t h) {
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 0) v = ldexp(m, -24);
    else if (e == 31) v = m ? NAN : INFINITY;
    else v = ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

typedef struct {
    char kind;  /* f, i, u, b; 0 when not a plain numeric dtype */
    int size;
    bool big;
    bool fortran;
    char descr[32];
    char shape[128];
    const unsigned char *data;
    size_t nbytes;
} npy;

static bool host_big(void) {
    uint16_t x = 1;
    return *(unsigned char *)&x == 0;
}

/* element i as a double (native conversion of the stored bytes) */
static double elem(const npy *a, size_t i) {
    unsigned char tmp[8];
    memcpy(tmp, a->data + i * (size_t)a->size, (size_t)a->size);
    if (a->big != host_big())
        for (int k = 0; k < a->size / 2; k++) {
            unsigned char t = tmp[k];
            tmp[k] = tmp[a->size - 1 - k];
            tmp[a->size - 1 - k] = t;
        }
    switch (a->kind) {
    case 'f':
        if (a->size == 2) { uint16_t h; memcpy(&h, tmp, 2); return half_to_double(h); }
        if (a->size == 4) { float f; memcpy(&f, tmp, 4); return f; }
        { double d; memcpy(&d, tmp, 8); return d; }
    case 'i':
        if (a->size == 1) { int8_t v; memcpy(&v, tmp, 1); return v; }
        if (a->size == 2) { int16_t v; memcpy(&v, tmp, 2); return v; }
        if (a->size == 4) { int32_t v; memcpy(&v, tmp, 4); return v; }
        { int64_t v; memcpy(&v, tmp, 8); return (double)v; }
    case 'u':
        if (a->size == 1) return tmp[0];
        if (a->size == 2) { uint16_t v; memcpy(&v, tmp, 2); return v; }
        if (a->size == 4) { uint32_t v; memcpy(&v, tmp, 4); return v; }
        { uint64_t v; memcpy(&v, tmp, 8); return (double)v; }
    default:
        return tmp[0] != 0;
    }
}

/* the value of 'key' in the header dict, copied (quotes and spaces trimmed) */
static bool header_value(const char *h, size_t n, const char *key, char *out, size_t osz) {
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = memmem(h, n, pat, strlen(pat));
    if (!p) return false;
    p += strlen(pat);
    const char *end = h + n;
    while (p < end && (*p == ' ' || *p == ':')) p++;
    const char *q = p;
    if (p < end && *p == '(') {
        while (q < end && *q != ')') q++;
        if (q < end) q++;
    } else if (p < end && (*p == '\'' || *p == '"')) {
        char quote = *p++;
        q = p;
        while (q < end && *q != quote) q++;
    } else {
        while (q < end && *q != ',' && *q != '}') q++;
    }
    size_t len = (size_t)(q - p);
    if (len >= osz) return false;
    memcpy(out, p, len);
    out[len] = 0;
    return true;
}

static bool parse_npy(const char *s, size_t n, npy *a, const char **why) {
    memset(a, 0, sizeof *a);
    if (n < 10 || memcmp(s, "\x93NUMPY", 6)) { *why = "not a .npy file"; return false; }
    unsigned major = (unsigned char)s[6];
    size_t hl, off;
    if (major == 1) hl = (unsigned char)s[8] | (size_t)(unsigned char)s[9] << 8, off = 10;
    else if (major == 2 || major == 3) {
        if (n < 12) { *why = "truncated .npy header"; return false; }
        hl = (unsigned char)s[8] | (size_t)(unsigned char)s[9] << 8 | (size_t)(unsigned char)s[10] << 16 |
             (size_t)(unsigned char)s[11] << 24;
        off = 12;
    } else { *why = "unknown .npy version"; return false; }
    if (off + hl > n) { *why = "truncated .npy header"; return false; }
    const char *h = s + off;
    char fo[16];
    if (!header_value(h, hl, "descr", a->descr, sizeof a->descr) || !header_value(h, hl, "shape", a->shape, sizeof a->shape) ||
        !header_value(h, hl, "fortran_order", fo, sizeof fo)) {
        *why = "unreadable .npy header";
        return false;
    }
    a->fortran = !strncmp(fo, "True", 4);
    a->data = (const unsigned char *)s + off + hl;
    a->nbytes = n - off - hl;
    const char *d = a->descr;
    if ((d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=') && strchr("fiub", d[1]) && d[2] >= '1' && d[2] <= '8' && !d[3]) {
        a->kind = d[1];
        a->size = d[2] - '0';
        a->big = d[0] == '>' || (d[0] == '=' && host_big());
        bool ok_size = a->kind == 'f' ? (a->size == 2 || a->size == 4 || a->size == 8)
                                      : (a->size == 1 || a->size == 2 || a->size == 4 || a->size == 8);
        if (!ok_size) a->kind = 0;
    }
    return true;
}

static void compare_values(const char *name, const npy *a, const npy *b, double rtol, double atol, hv_cmp *c) {
    size_t na = a->nbytes / (size_t)a->size, nb = b->nbytes / (size_t)b->size;
    if (na != nb) {
        differ(c, "%s: %zu values, the reference has %zu", name, na, nb);
        return;
    }
    c->numeric = true;
    for (size_t i = 0; i < na; i++) {
        double x = elem(a, i), y = elem(b, i);
        if (!close_enough(c, x, y, rtol, atol))
            differ(c, "%s: value %zu is %.9g, the reference has %.9g (tolerance: rtol %g, atol %g)", name, i, x, y, rtol, atol);
    }
}

static void compare_exact(const char *name, const char *a, size_t alen, const char *b, size_t blen, hv_cmp *c) {
    size_t n = alen < blen ? alen : blen;
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) {
            differ(c, "%s: the bytes differ from offset %zu", name, i);
            return;
        }
    if (alen != blen) differ(c, "%s: %zu bytes, the reference has %zu", name, alen, blen);
}

static void compare_npy(const char *name, const char *a, size_t alen, const char *b, size_t blen, double rtol, double atol,
                        hv_cmp *c) {
    npy x, y;
    const char *why;
    if (!parse_npy(b, blen, &y, &why)) {
        /* the reference is no array: compare bytes */
        compare_exact(name, a, alen, b, blen, c);
        return;
    }
    if (!parse_npy(a, alen, &x, &why)) {
        differ(c, "%s: %s, the reference is an array of %s", name, why, y.descr);
        return;
    }
    if (strcmp(x.descr, y.descr)) { differ(c, "%s: dtype %s, the reference has %s", name, x.descr, y.descr); return; }
    if (strcmp(x.shape, y.shape)) { differ(c, "%s: shape %s, the reference has %s", name, x.shape, y.shape); return; }
    if (x.fortran != y.fortran) { differ(c, "%s: memory order differs from the reference", name); return; }
    if (!x.kind) { compare_exact(name, a, alen, b, blen, c); return; } /* complex, strings, records: bytes */
    compare_values(name, &x, &y, rtol, atol, c);
}

static void compare_raw(const char *name, int size, const char *a, size_t alen, const char *b, size_t blen, double rtol,
                        double atol, hv_cmp *c) {
    if (alen % (size_t)size || blen % (size_t)size) {
        if (alen % (size_t)size) differ(c, "%s: %zu bytes is not a whole number of float%d values", name, alen, size * 8);
        else differ(c, "%s: the reference's %zu bytes are not a whole number of float%d values", name, blen, size * 8);
        return;
    }
    npy x = {0}, y = {0};
    x.kind = y.kind = 'f';
    x.size = y.size = size;
    x.data = (const unsigned char *)a, x.nbytes = alen;
    y.data = (const unsigned char *)b, y.nbytes = blen;
    compare_values(name, &x, &y, rtol, atol, c);
}

void hv_compare_bytes(hv_out_kind kind, const char *name, const char *a, size_t alen, const char *b, size_t blen,
                      double rtol, double atol, hv_cmp *c) {
    hv_cmp_init(c);
    if (kind == HV_OUT_AUTO) kind = (memchr(a, 0, alen) || memchr(b, 0, blen)) ? HV_OUT_BYTES : HV_OUT_TEXT;
    switch (kind) {
    case HV_OUT_STDOUT:
    case HV_OUT_TEXT:
        compare_text(name, a, alen, b, blen, rtol, atol, c);
        break;
    case HV_OUT_NPY:
        compare_npy(name, a, alen, b, blen, rtol, atol, c);
        break;
    case HV_OUT_F32:
        compare_raw(name, 4, a, alen, b, blen, rtol, atol, c);
        break;
    case HV_OUT_F64:
        compare_raw(name, 8, a, alen, b, blen, rtol, atol, c);
        break;
    default:
        compare_exact(name, a, alen, b, blen, c);
        break;
    }
}
