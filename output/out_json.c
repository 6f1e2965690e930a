/* out_json: an array of findings: path, line, column, end_line, end_column (1-based, code points), code, name,
 * severity, message, fix, and for design findings (XPU810, XPU811) the scope they leave as it is (line, column,
 * end_line, end_column: the CUDA backend, the CUDA branch); then one entry per path the run did not check: code null, name "not-checked", severity
 * "error" (named on the command line) or "warning", the reason in message, at line 1 column 1. */
#include "output/out.h"
#include <string.h>

/* The array is written as cJSON_Print writes it (formatted: a member per line, tab-indented, "key":<tab>value,
 * array elements separated by ", "), byte for byte, but straight into a buffer: a report of 60,000 findings built
 * no tree of cJSON objects (a dozen allocations per finding, then the print and the delete), which was most of the
 * time spent writing it. */
typedef struct {
    ut_buf b;
    int depth;  /* of the members being written */
    bool first; /* no member written yet in the object being written */
} jw;

static void tabs(ut_buf *b, int n) {
    static const char t[] = "\t\t\t\t\t\t\t\t";
    for (; n > 8; n -= 8) ut_buf_append(b, t, 8);
    if (n > 0) ut_buf_append(b, t, (size_t)n);
}

/* the bytes jstr escapes: below 32, the quote and the backslash */
static const unsigned char escaped[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    ['"'] = 1, ['\\'] = 1,
};

/* a string as cJSON's print_string_ptr writes it: the two-character escapes, \u00XX below 32, other bytes as they
 * are (NULL: "") */
static void jstr(ut_buf *b, const char *s) {
    ut_buf_putc(b, '"');
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    for (;;) {
        const unsigned char *run = p;
        while (!escaped[*p]) p++; /* the NUL ends the scan: it is escaped[0] */
        ut_buf_append(b, (const char *)run, (size_t)(p - run));
        if (!*p) break;
        char e[8];
        switch (*p) {
        case '"': memcpy(e, "\\\"", 3); break;
        case '\\': memcpy(e, "\\\\", 3); break;
        case '\b': memcpy(e, "\\b", 3); break;
        case '\f': memcpy(e, "\\f", 3); break;
        case '\n': memcpy(e, "\\n", 3); break;
        case '\r': memcpy(e, "\\r", 3); break;
        case '\t': memcpy(e, "\\t", 3); break;
        default: snprintf(e, sizeof e, "\\u%04x", *p);
        }
        ut_buf_puts(b, e);
        p++;
    }
    ut_buf_putc(b, '"');
}

/* a member's key: the keys are this file's own words, which need no escape */
static void key(jw *w, const char *k) {
    if (!w->first) ut_buf_append(&w->b, ",\n", 2);
    w->first = false;
    tabs(&w->b, w->depth);
    ut_buf_putc(&w->b, '"');
    ut_buf_puts(&w->b, k);
    ut_buf_append(&w->b, "\":\t", 3);
}

static void open_obj(jw *w) {
    ut_buf_puts(&w->b, "{\n");
    w->depth++;
    w->first = true;
}

static void close_obj(jw *w) {
    ut_buf_putc(&w->b, '\n');
    tabs(&w->b, w->depth - 1);
    ut_buf_putc(&w->b, '}');
    w->depth--;
    w->first = false;
}

/* cJSON_AddStringToObject with a NULL string adds nothing */
static void str_member(jw *w, const char *k, const char *v) {
    if (!v) return;
    key(w, k);
    jstr(&w->b, v);
}

static void uint_member(jw *w, const char *k, uint32_t v) {
    key(w, k);
    char buf[12], *p = buf + sizeof buf - 1;
    *p = 0;
    do *--p = (char)('0' + v % 10);
    while (v /= 10);
    ut_buf_puts(&w->b, p);
}

static void fix_member(jw *w, const an_diag *d, const an_source *src) {
    key(w, "fix");
    if (!d->fix) {
        ut_buf_puts(&w->b, "null");
        return;
    }
    open_obj(w);
    str_member(w, "message", d->fix->title ? d->fix->title : "");
    str_member(w, "applicability", an_applicability_name(d->fix->applicability));
    key(w, "edits");
    ut_buf_putc(&w->b, '[');
    w->depth++; /* an array's elements are one level deeper */
    for (size_t i = 0; i < d->fix->edits.len; i++) {
        const an_edit *e = &d->fix->edits.items[i];
        uint32_t l, c, el, ec;
        an_source_position(src, e->start, &l, &c);
        an_source_position(src, e->end, &el, &ec);
        if (i) ut_buf_puts(&w->b, ", ");
        open_obj(w);
        str_member(w, "content", e->text ? e->text : "");
        uint_member(w, "start_byte", e->start);
        uint_member(w, "end_byte", e->end);
        uint_member(w, "line", l);
        uint_member(w, "column", c);
        uint_member(w, "end_line", el);
        uint_member(w, "end_column", ec);
        close_obj(w);
    }
    w->depth--;
    ut_buf_putc(&w->b, ']');
    w->first = false;
    close_obj(w);
}

/* the entry's object, one tab deep (the array's elements) */
static void begin_entry(jw *w, FILE *fp, size_t *n) {
    if (w->b.len > 1 << 16) {
        fwrite(w->b.data, 1, w->b.len, fp);
        ut_buf_clear(&w->b);
    }
    ut_buf_puts(&w->b, (*n)++ ? ", " : "[");
    w->depth = 1;
    open_obj(w);
}

void out_json(const out_report *r, FILE *fp) {
    jw w = {0};
    ut_buf_init(&w.b);
    size_t n = 0;
    for (size_t i = 0; i < r->res->len; i++) {
        const an_file_result *f = &r->res->items[i];
        char *path = f->diags.len ? out_utf8_lossy(f->file->path) : NULL;
        for (size_t j = 0; j < f->diags.len; j++) {
            const an_diag *d = &f->diags.items[j];
            begin_entry(&w, fp, &n);
            str_member(&w, "path", path);
            uint_member(&w, "line", d->line);
            uint_member(&w, "column", d->col);
            uint_member(&w, "end_line", d->end_line);
            uint_member(&w, "end_column", d->end_col);
            str_member(&w, "code", d->rule->code);
            str_member(&w, "name", d->rule->name);
            str_member(&w, "severity", an_severity_name(d->severity));
            str_member(&w, "message", d->message);
            fix_member(&w, d, &f->src);
            if (d->scope_end) {
                key(&w, "scope");
                open_obj(&w);
                uint_member(&w, "line", d->scope_line);
                uint_member(&w, "column", d->scope_col);
                uint_member(&w, "end_line", d->scope_end_line);
                uint_member(&w, "end_column", d->scope_end_col);
                close_obj(&w);
            }
            close_obj(&w);
        }
        ut_free(path);
    }
    out_skip *sk;
    size_t ns = out_skips(r, &sk);
    for (size_t i = 0; i < ns; i++) {
        char *path = out_utf8_lossy(sk[i].path), *why = out_utf8_lossy(sk[i].why);
        begin_entry(&w, fp, &n);
        str_member(&w, "path", path);
        uint_member(&w, "line", 1);
        uint_member(&w, "column", 1);
        uint_member(&w, "end_line", 1);
        uint_member(&w, "end_column", 1);
        key(&w, "code");
        ut_buf_puts(&w.b, "null");
        str_member(&w, "name", "not-checked");
        str_member(&w, "severity", sk[i].error ? "error" : "warning");
        ut_buf m;
        ut_buf_init(&m);
        ut_buf_printf(&m, "not checked: %s", why);
        str_member(&w, "message", m.data);
        ut_buf_free(&m);
        key(&w, "fix");
        ut_buf_puts(&w.b, "null");
        close_obj(&w);
        ut_free(path), ut_free(why);
    }
    ut_free(sk);
    ut_buf_puts(&w.b, n ? "]\n" : "[]\n");
    fwrite(w.b.data, 1, w.b.len, fp);
    ut_buf_free(&w.b);
}
