/* cli_baseline: reading, writing and applying baseline files (JSON). */
#include "cli/cli_baseline.h"
#include "output/out_fingerprint.h"
#include "rewriters/rw_write.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>

typedef struct {
    const char *fp, *code, *path;
    unsigned line;
    char *source;
} wrow;

static int wrow_cmp(const void *a, const void *b) {
    const wrow *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    if (c) return c;
    if (x->line != y->line) return x->line < y->line ? -1 : 1;
    c = strcmp(x->code, y->code);
    return c ? c : strcmp(x->fp, y->fp);
}

/* An entry's `source` is for the reader of the file (the fingerprint carries the whole line): a line longer than this
 * many bytes is cut at a character boundary and marked, so a 1 MB line with 40,000 findings writes 40,000 short
 * strings, not 40 GB. */
#define SOURCE_MAX 200

static char *entry_source(const an_source *src, uint32_t line) {
    char *s = out_normalized_line(src, line);
    size_t n = strlen(s);
    if (n <= SOURCE_MAX) return s;
    n = SOURCE_MAX;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    memcpy(s + n, "...", 4);
    return s;
}

bool cli_baseline_write(const char *file, const an_results *res, char **fps, ut_buf *err) {
    UT_VEC(wrow) rows = {0};
    UT_VEC(char *) paths = {0};
    size_t k = 0;
    for (size_t i = 0; i < res->len; i++) {
        const an_file_result *f = &res->items[i];
        if (!f->diags.len) continue;
        char *path = out_project_path(f->file->path);
        ut_vec_push(&paths, path);
        char *line = NULL; /* the entry source of the last finding's line: findings come in line order */
        uint32_t line_no = 0;
        for (size_t j = 0; j < f->diags.len; j++, k++) {
            const an_diag *d = &f->diags.items[j];
            if (!line || d->line != line_no) ut_free(line), line = entry_source(&f->src, d->line), line_no = d->line;
            wrow r = {fps[k], d->rule->code, path, d->line, ut_strdup(line)};
            ut_vec_push(&rows, r);
        }
        ut_free(line);
    }
    if (rows.len > 1) qsort(rows.items, rows.len, sizeof(wrow), wrow_cmp);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "xpuify_baseline", 1);
    cJSON_AddStringToObject(root, "comment",
                            "Findings accepted when this file was written; `xpuify check --baseline FILE` reports only "
                            "others. Regenerate with --write-baseline FILE.");
    cJSON *arr = cJSON_AddArrayToObject(root, "findings");
    for (size_t i = 0; i < rows.len; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "fingerprint", rows.items[i].fp);
        cJSON_AddStringToObject(o, "code", rows.items[i].code);
        cJSON_AddStringToObject(o, "path", rows.items[i].path);
        cJSON_AddNumberToObject(o, "line", rows.items[i].line);
        cJSON_AddStringToObject(o, "source", rows.items[i].source);
        cJSON_AddItemToArray(arr, o);
        ut_free(rows.items[i].source);
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_printf(&b, "%s\n", text);
    cJSON_free(text);
    char *why = NULL;
    FILE *probe = fopen(file, "r");
    int rc;
    if (probe) {
        fclose(probe);
        rc = rw_write_atomic(file, b.data, b.len, &why);
    } else {
        rc = rw_create_atomic(file, b.data, b.len, &why);
    }
    if (rc != 0) ut_buf_printf(err, "%s: cannot write the baseline: %s", file, why ? why : "error");
    ut_free(why);
    ut_buf_free(&b);
    for (size_t i = 0; i < paths.len; i++) ut_free(paths.items[i]);
    ut_vec_free(&paths);
    ut_vec_free(&rows);
    return rc == 0;
}

static int entry_cmp(const void *a, const void *b) {
    return strcmp(((const cli_baseline_entry *)a)->fingerprint, ((const cli_baseline_entry *)b)->fingerprint);
}

bool cli_baseline_load(const char *file, cli_baseline *b, ut_buf *err) {
    memset(b, 0, sizeof *b);
    FILE *f = fopen(file, "rb");
    if (!f) { ut_buf_printf(err, "%s: cannot read the baseline: %s", file, strerror(errno)); return false; }
    ut_buf t;
    ut_buf_init(&t);
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) ut_buf_append(&t, chunk, n);
    fclose(f);
    cJSON *root = cJSON_ParseWithLength(t.data ? t.data : "", t.len);
    ut_buf_free(&t);
    cJSON *arr = root ? cJSON_GetObjectItemCaseSensitive(root, "findings") : NULL;
    if (!root || !cJSON_IsObject(root) || !cJSON_GetObjectItemCaseSensitive(root, "xpuify_baseline") || !cJSON_IsArray(arr)) {
        ut_buf_printf(err, "%s: not an xpuify baseline (a JSON object with `xpuify_baseline` and `findings`; write one with --write-baseline)", file);
        cJSON_Delete(root);
        return false;
    }
    int idx = 0;
    cJSON *e;
    cJSON_ArrayForEach(e, arr) {
        cJSON *fp = cJSON_GetObjectItemCaseSensitive(e, "fingerprint");
        if (!cJSON_IsString(fp)) {
            ut_buf_printf(err, "%s: findings[%d] has no `fingerprint` string", file, idx);
            cJSON_Delete(root);
            cli_baseline_free(b);
            return false;
        }
        cJSON *code = cJSON_GetObjectItemCaseSensitive(e, "code"), *path = cJSON_GetObjectItemCaseSensitive(e, "path"),
              *line = cJSON_GetObjectItemCaseSensitive(e, "line"), *src = cJSON_GetObjectItemCaseSensitive(e, "source");
        cli_baseline_entry x = {ut_strdup(fp->valuestring), ut_strdup(cJSON_IsString(code) ? code->valuestring : "?"),
                                ut_strdup(cJSON_IsString(path) ? path->valuestring : "?"),
                                ut_strdup(cJSON_IsString(src) ? src->valuestring : ""),
                                cJSON_IsNumber(line) ? (unsigned)line->valuedouble : 0, false};
        ut_vec_push(&b->entries, x);
        idx++;
    }
    cJSON_Delete(root);
    if (b->entries.len > 1) qsort(b->entries.items, b->entries.len, sizeof(cli_baseline_entry), entry_cmp);
    return true;
}

size_t cli_baseline_filter(cli_baseline *b, an_results *res, char **fps) {
    size_t hidden = 0, k = 0;
    for (size_t i = 0; i < res->len; i++) {
        an_diag_list *l = &res->items[i].diags;
        size_t w = 0;
        for (size_t j = 0; j < l->len; j++, k++) {
            cli_baseline_entry key = {.fingerprint = fps[k]};
            cli_baseline_entry *e = b->entries.len ? bsearch(&key, b->entries.items, b->entries.len,
                                                            sizeof(cli_baseline_entry), entry_cmp)
                                                   : NULL;
            if (e && !e->used) {
                e->used = true;
                hidden++;
                ut_free(l->items[j].message);
                an_fix_free(l->items[j].fix);
                continue;
            }
            l->items[w++] = l->items[j];
        }
        l->len = w;
    }
    return hidden;
}

void cli_baseline_free(cli_baseline *b) {
    for (size_t i = 0; i < b->entries.len; i++) {
        cli_baseline_entry *e = &b->entries.items[i];
        ut_free(e->fingerprint), ut_free(e->code), ut_free(e->path), ut_free(e->source);
    }
    ut_vec_free(&b->entries);
}
