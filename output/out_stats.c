/* out_stats: --statistics: findings counted per rule, most frequent first, then (text, when they lie in more than one
 * directory) per directory, so that product code and tests can be told apart at a glance. */
#include "output/out.h"
#include <cjson/cJSON.h>

typedef struct {
    const an_rule *rule;
    size_t count, fixable;
} row;

static int row_cmp(const void *a, const void *b) {
    const row *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->rule->code, y->rule->code);
}

typedef struct {
    char *dir;
    size_t count;
} dir_row;

static int dir_cmp(const void *a, const void *b) {
    const dir_row *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->dir, y->dir);
}

#define DIR_DEPTH 2 /* components below the common directory: `src/pkg/`, `tests/unit/` */
#define DIR_ROWS 15

/* Findings per directory: the directories of the files, DIR_DEPTH components below the one they all share. */
static void per_directory(const out_report *r, FILE *fp) {
    const char *common = NULL;
    size_t clen = 0;
    for (size_t i = 0; i < r->res->len; i++) {
        if (!r->res->items[i].diags.len) continue;
        const char *p = r->res->items[i].file->path;
        const char *slash = strrchr(p, '/');
        size_t dl = slash ? (size_t)(slash - p) + 1 : 0;
        if (!common) { common = p, clen = dl; continue; }
        size_t k = 0;
        while (k < clen && k < dl && common[k] == p[k]) k++;
        while (k > 0 && common[k - 1] != '/') k--;
        clen = k;
    }
    if (!common) return;
    UT_VEC(dir_row) rows = {0};
    for (size_t i = 0; i < r->res->len; i++) {
        size_t n = r->res->items[i].diags.len;
        if (!n) continue;
        const char *p = r->res->items[i].file->path + clen;
        const char *end = p;
        for (int c = 0; c < DIR_DEPTH; c++) {
            const char *s = strchr(end, '/');
            if (!s) break;
            end = s + 1;
        }
        size_t kl = (size_t)(end - p);
        size_t j = 0;
        while (j < rows.len && !(strlen(rows.items[j].dir) == kl && !memcmp(rows.items[j].dir, p, kl))) j++;
        if (j == rows.len) {
            dir_row x = {ut_strndup(p, kl), 0};
            ut_vec_push(&rows, x);
        }
        rows.items[j].count += n;
    }
    if (rows.len > 1) {
        qsort(rows.items, rows.len, sizeof(dir_row), dir_cmp);
        int w = snprintf(NULL, 0, "%zu", rows.items[0].count);
        fprintf(fp, "\nBy directory (under %.*s):\n", (int)(clen ? clen : 2), clen ? common : "./");
        size_t shown = rows.len < DIR_ROWS ? rows.len : DIR_ROWS, rest = 0;
        for (size_t i = 0; i < rows.len; i++) {
            if (i < shown) fprintf(fp, "%*zu  %s\n", w, rows.items[i].count, rows.items[i].dir[0] ? rows.items[i].dir : "./");
            else rest += rows.items[i].count;
        }
        if (rows.len > shown) fprintf(fp, "%*zu  (%zu more directories)\n", w, rest, rows.len - shown);
    }
    for (size_t i = 0; i < rows.len; i++) ut_free(rows.items[i].dir);
    ut_vec_free(&rows);
}

void out_statistics(const out_report *r, bool json, FILE *fp) {
    size_t n = an_catalog_count(r->cat);
    row *rows = ut_calloc(n ? n : 1, sizeof(row));
    for (size_t i = 0; i < r->res->len; i++)
        for (size_t j = 0; j < r->res->items[i].diags.len; j++) {
            const an_diag *d = &r->res->items[i].diags.items[j];
            row *x = &rows[d->rule->index];
            x->rule = d->rule;
            x->count++;
            if (d->fix && d->fix->applicability == AN_FIX_SAFE) x->fixable++;
        }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i].count) rows[m++] = rows[i];
    if (m > 1) qsort(rows, m, sizeof(row), row_cmp);
    if (json) {
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; i < m; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "code", rows[i].rule->code);
            cJSON_AddStringToObject(o, "name", rows[i].rule->name);
            cJSON_AddNumberToObject(o, "count", (double)rows[i].count);
            cJSON_AddNumberToObject(o, "fixable", (double)rows[i].fixable);
            cJSON_AddItemToArray(arr, o);
        }
        char *s = cJSON_Print(arr);
        fprintf(fp, "%s\n", s);
        cJSON_free(s);
        cJSON_Delete(arr);
    } else {
        int w = 1;
        for (size_t i = 0; i < m; i++) {
            int k = snprintf(NULL, 0, "%zu", rows[i].count);
            if (k > w) w = k;
        }
        size_t total = 0;
        for (size_t i = 0; i < m; i++) {
            fprintf(fp, "%*zu  %-7s %s %s\n", w, rows[i].count, rows[i].rule->code, rows[i].fixable ? "[*]" : "[ ]",
                    rows[i].rule->name);
            total += rows[i].count;
        }
        fprintf(fp, "%s%zu finding%s in total", m ? "" : "", total, total == 1 ? "" : "s");
        size_t fixable = 0;
        for (size_t i = 0; i < m; i++) fixable += rows[i].fixable;
        if (fixable) fprintf(fp, "; [*] %zu fixable with `xpuify fix`", fixable);
        fputs(".\n", fp);
        per_directory(r, fp);
    }
    ut_free(rows);
}
