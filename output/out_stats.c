/* out_stats: --statistics: findings counted per rule, most frequent first. */
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
    }
    ut_free(rows);
}
