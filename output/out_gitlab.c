/* out_gitlab: GitLab Code Quality report: a JSON array of issues (description, check_name, fingerprint, severity,
 * location.path relative to the project root, location.lines.begin); a path the run did not check is an issue of
 * check_name "xpuify/not-checked". */
#include "util/ut_hash.h"
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
    out_skip *sk;
    size_t n = out_skips(r, &sk);
    for (size_t i = 0; i < n; i++) {
        char *path = out_project_path(sk[i].path), *lossy = out_utf8_lossy(path), *why = out_utf8_lossy(sk[i].why);
        cJSON *o = cJSON_CreateObject();
        ut_buf m;
        ut_buf_init(&m);
        ut_buf_printf(&m, "not checked: %s", why);
        cJSON_AddStringToObject(o, "description", m.data);
        cJSON_AddStringToObject(o, "check_name", "xpuify/not-checked");
        /* stable across runs: the path and the check, not the reason's wording */
        uint8_t h[UT_HASH_LEN];
        ut_buf_clear(&m);
        ut_buf_printf(&m, "xpuify/not-checked\n%s", path);
        ut_hash20(m.data, m.len, h);
        char hex[33];
        for (int k2 = 0; k2 < 16; k2++) snprintf(hex + 2 * k2, 3, "%02x", h[k2]);
        cJSON_AddStringToObject(o, "fingerprint", hex);
        cJSON_AddStringToObject(o, "severity", sk[i].error ? "critical" : "major");
        cJSON *cats = cJSON_AddArrayToObject(o, "categories");
        cJSON_AddItemToArray(cats, cJSON_CreateString("Bug Risk"));
        cJSON *loc = cJSON_AddObjectToObject(o, "location");
        cJSON_AddStringToObject(loc, "path", lossy);
        cJSON *lines = cJSON_AddObjectToObject(loc, "lines");
        cJSON_AddNumberToObject(lines, "begin", 1);
        cJSON_AddItemToArray(arr, o);
        ut_buf_free(&m);
        ut_free(path), ut_free(lossy), ut_free(why);
    }
    ut_free(sk);
    char *s = cJSON_Print(arr);
    fputs(s, fp);
    fputc('\n', fp);
    cJSON_free(s);
    cJSON_Delete(arr);
    out_fingerprints_free(own, r->res);
}
