/* out_gitlab: GitLab Code Quality report: a JSON array of issues (description, check_name, fingerprint, severity,
 * location.path relative to the project root, location.lines.begin). */
#include "output/out.h"
#include "output/out_fingerprint.h"
#include <cjson/cJSON.h>

static const char *severity(an_severity s) {
    return s == AN_SEV_ERROR ? "critical" : s == AN_SEV_WARNING ? "major" : "info";
}

void out_gitlab(const out_report *r, FILE *fp) {
    char **own = r->fingerprints ? NULL : out_fingerprints(r->res);
    char **fps = r->fingerprints ? r->fingerprints : own;
    cJSON *arr = cJSON_CreateArray();
    size_t k = 0;
    for (size_t i = 0; i < r->res->len; i++) {
        const an_file_result *f = &r->res->items[i];
        if (!f->diags.len) continue;
        char *path = out_project_path(f->file->path);
        for (size_t j = 0; j < f->diags.len; j++, k++) {
            const an_diag *d = &f->diags.items[j];
            cJSON *o = cJSON_CreateObject();
            char desc[4096];
            snprintf(desc, sizeof desc, "%s [%s] %s", d->rule->code, d->rule->name, d->message);
            cJSON_AddStringToObject(o, "description", desc);
            cJSON_AddStringToObject(o, "check_name", d->rule->code);
            cJSON_AddStringToObject(o, "fingerprint", fps[k]);
            cJSON_AddStringToObject(o, "severity", severity(d->severity));
            cJSON *cats = cJSON_AddArrayToObject(o, "categories");
            cJSON_AddItemToArray(cats, cJSON_CreateString("Compatibility"));
            cJSON *loc = cJSON_AddObjectToObject(o, "location");
            cJSON_AddStringToObject(loc, "path", path);
            cJSON *lines = cJSON_AddObjectToObject(loc, "lines");
            cJSON_AddNumberToObject(lines, "begin", d->line);
            cJSON_AddNumberToObject(lines, "end", d->end_line);
            cJSON_AddItemToArray(arr, o);
        }
        ut_free(path);
    }
    char *s = cJSON_Print(arr);
    fputs(s, fp);
    fputc('\n', fp);
    cJSON_free(s);
    cJSON_Delete(arr);
    out_fingerprints_free(own, r->res);
}
