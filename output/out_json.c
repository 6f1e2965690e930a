/* out_json: an array of findings: path, line, column, end_line, end_column (1-based, code points), code, name,
 * severity, message, fix, and for design findings (XPU810, XPU811) the scope they leave as it is (line, column,
 * end_line, end_column: the CUDA backend, the CUDA branch); then one entry per path the run did not check: code null, name "not-checked", severity
 * "error" (named on the command line) or "warning", the reason in message, at line 1 column 1. */
#include "output/out.h"
#include <cjson/cJSON.h>
#include <string.h>

/* The array is written an entry at a time, as cJSON_Print writes an array of them (entries separated by ", ",
 * each entry's lines one tab deeper than the entry printed alone): a report of 60,000 findings no longer builds
 * one tree and one string of 50 MB. */
typedef struct {
    FILE *fp;
    char *buf;
    int cap;
    size_t n;
} entries;

static void put_entry(entries *w, cJSON *o) {
    while (!cJSON_PrintPreallocated(o, w->buf, w->cap, 1)) {
        w->cap *= 2;
        w->buf = ut_realloc(w->buf, (size_t)w->cap);
    }
    fputs(w->n++ ? ", " : "[", w->fp);
    for (const char *p = w->buf, *nl;; p = nl + 1) { /* strings hold no newline: cJSON escapes it */
        nl = strchr(p, '\n');
        if (!nl) {
            fputs(p, w->fp);
            break;
        }
        fwrite(p, 1, (size_t)(nl - p) + 1, w->fp);
        fputc('\t', w->fp);
    }
    cJSON_Delete(o);
}

void out_json(const out_report *r, FILE *fp) {
    entries w = {fp, NULL, 4096, 0};
    w.buf = ut_malloc((size_t)w.cap);
    for (size_t i = 0; i < r->res->len; i++) {
        const an_file_result *f = &r->res->items[i];
        char *path = f->diags.len ? out_utf8_lossy(f->file->path) : NULL;
        for (size_t j = 0; j < f->diags.len; j++) {
            const an_diag *d = &f->diags.items[j];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "path", path);
            out_json_add_uint(o, "line", d->line);
            out_json_add_uint(o, "column", d->col);
            out_json_add_uint(o, "end_line", d->end_line);
            out_json_add_uint(o, "end_column", d->end_col);
            cJSON_AddStringToObject(o, "code", d->rule->code);
            cJSON_AddStringToObject(o, "name", d->rule->name);
            cJSON_AddStringToObject(o, "severity", an_severity_name(d->severity));
            cJSON_AddStringToObject(o, "message", d->message);
            cJSON *fix = out_json_fix(d, &f->src);
            cJSON_AddItemToObject(o, "fix", fix ? fix : cJSON_CreateNull());
            if (d->scope_end) {
                cJSON *sc = cJSON_AddObjectToObject(o, "scope");
                out_json_add_uint(sc, "line", d->scope_line);
                out_json_add_uint(sc, "column", d->scope_col);
                out_json_add_uint(sc, "end_line", d->scope_end_line);
                out_json_add_uint(sc, "end_column", d->scope_end_col);
            }
            put_entry(&w, o);
        }
        ut_free(path);
    }
    out_skip *sk;
    size_t n = out_skips(r, &sk);
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        char *path = out_utf8_lossy(sk[i].path), *why = out_utf8_lossy(sk[i].why);
        cJSON_AddStringToObject(o, "path", path);
        out_json_add_uint(o, "line", 1);
        out_json_add_uint(o, "column", 1);
        out_json_add_uint(o, "end_line", 1);
        out_json_add_uint(o, "end_column", 1);
        cJSON_AddNullToObject(o, "code");
        cJSON_AddStringToObject(o, "name", "not-checked");
        cJSON_AddStringToObject(o, "severity", sk[i].error ? "error" : "warning");
        ut_buf m;
        ut_buf_init(&m);
        ut_buf_printf(&m, "not checked: %s", why);
        cJSON_AddStringToObject(o, "message", m.data);
        ut_buf_free(&m);
        cJSON_AddNullToObject(o, "fix");
        put_entry(&w, o);
        ut_free(path), ut_free(why);
    }
    ut_free(sk);
    fputs(w.n ? "]\n" : "[]\n", fp);
    ut_free(w.buf);
}
