/* out: format selection and the pieces the formats share. */
#include "output/out.h"
#include <cjson/cJSON.h>

bool out_format_parse(const char *s, out_format *f) {
    static const struct { const char *n; out_format f; } t[] = {
        {"text", OUT_TEXT}, {"full", OUT_TEXT}, {"concise", OUT_CONCISE}, {"json", OUT_JSON},
        {"sarif", OUT_SARIF}, {"github", OUT_GITHUB}, {"gitlab", OUT_GITLAB}, {"junit", OUT_JUNIT}};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (!strcmp(s, t[i].n)) return *f = t[i].f, true;
    return false;
}

const char *out_format_names(void) { return "text, concise, json, sarif, github, gitlab, junit"; }

const char *out_report_fingerprint(const out_report *r, size_t i, size_t j) {
    if (!r->fingerprints) return NULL;
    size_t k = 0;
    for (size_t m = 0; m < i; m++) k += r->res->items[m].diags.len;
    return r->fingerprints[k + j];
}

void out_write(out_format f, const out_report *r, FILE *fp) {
    switch (f) {
    case OUT_TEXT: out_text(r, fp, false); break;
    case OUT_CONCISE: out_text(r, fp, true); break;
    case OUT_JSON: out_json(r, fp); break;
    case OUT_SARIF: out_sarif(r, fp); break;
    case OUT_GITHUB: out_github(r, fp); break;
    case OUT_GITLAB: out_gitlab(r, fp); break;
    case OUT_JUNIT: out_junit(r, fp); break;
    }
}

size_t out_count(const an_results *r) {
    size_t n = 0;
    for (size_t i = 0; i < r->len; i++) n += r->items[i].diags.len;
    return n;
}

void out_json_add_uint(cJSON *o, const char *name, uint32_t v) {
    char buf[12], *p = buf + sizeof buf - 1;
    *p = 0;
    do *--p = (char)('0' + v % 10);
    while (v /= 10);
    cJSON_AddRawToObject(o, name, p);
}

char *out_utf8_lossy(const char *s) {
    size_t n = strlen(s);
    if (an_utf8_invalid_at(s, n) < 0) return ut_strdup(s);
    ut_buf b;
    ut_buf_init(&b);
    size_t i = 0;
    while (i < n) {
        long bad = an_utf8_invalid_at(s + i, n - i);
        if (bad < 0) { ut_buf_append(&b, s + i, n - i); break; }
        ut_buf_append(&b, s + i, (size_t)bad);
        ut_buf_puts(&b, "\xEF\xBF\xBD"); /* U+FFFD */
        i += (size_t)bad + 1;
    }
    return ut_buf_take(&b);
}

size_t out_skips(const out_report *r, out_skip **out) {
    size_t n = r->skipped ? r->skipped->len : 0;
    for (size_t i = 0; i < r->res->len; i++) n += r->res->items[i].status != AN_LOAD_OK;
    *out = NULL;
    if (!n) return 0;
    out_skip *s = ut_calloc(n, sizeof *s);
    size_t k = 0;
    for (size_t i = 0; i < r->res->len; i++) {
        const an_file_result *f = &r->res->items[i];
        if (f->status == AN_LOAD_OK) continue;
        s[k++] = (out_skip){f->file->path, f->error ? f->error : "not checked", f->file->named};
    }
    for (size_t i = 0; r->skipped && i < r->skipped->len; i++)
        s[k++] = (out_skip){r->skipped->items[i].path, r->skipped->items[i].why, false};
    *out = s;
    return n;
}
