/* out_json: an array of findings: path, line, column, end_line, end_column (1-based, code points), code, name,
 * severity, message, fix, and for design findings (XPU810, XPU811) the scope they leave as it is (line, column,
 * end_line, end_column: the CUDA backend, the CUDA branch); then one entry per path the run did not check: code null, name "not-checked", severity
 * "error" (named on the command line) or "warning", the reason in message, at line 1 column 1. */
#include "output/out.h"
#include <cjson/cJSON.h>

void out_json(const out_report *r, FILE *fp) {
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < r->res->len; i++) {
        const an_file_result *f = &r->res->items[i];
        for (size_t j = 0; j < f->diags.len; j++) {
            const an_diag *d = &f->diags.items[j];
            cJSON *o = cJSON_CreateObject();
            char *path = out_utf8_lossy(f->file->path);
            cJSON_AddStringToObject(o, "path", path);
            ut_free(path);
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
            cJSON_AddItemToArray(arr, o);
        }
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
        cJSON_AddItemToArray(arr, o);
        ut_free(path), ut_free(why);
    }
    ut_free(sk);
    char *s = cJSON_Print(arr);
    fputs(s, fp);
    fputc('\n', fp);
    cJSON_free(s);
    cJSON_Delete(arr);
}
