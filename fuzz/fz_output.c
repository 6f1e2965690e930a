/* fz_output: libFuzzer target for the report writers. Input: one option byte, a file name (up to the first
 * newline; any bytes but NUL, as a file system allows), then the Python file. The file is analyzed with fixes
 * and written in every format.
 * Properties: json and sarif output is valid UTF-8 and parses as JSON with one entry per finding at the finding's
 * position; the github format keeps one line per finding; text and concise do not crash. */
#include "output/out.h"
#include "fuzz/fz_common.h"
#include <cjson/cJSON.h>

static char *render(out_format f, const out_report *r, size_t *len) {
    char *buf = NULL;
    FILE *fp = open_memstream(&buf, len);
    FZ_ASSERT(fp, "open_memstream");
    out_write(f, r, fp);
    fclose(fp);
    return buf;
}

static cJSON *parse_json(const char *what, const char *s, size_t n) {
    FZ_ASSERT(an_utf8_invalid_at(s, n) < 0, "%s output is not valid UTF-8 (byte %ld):\n%s", what, an_utf8_invalid_at(s, n), s);
    cJSON *j = cJSON_ParseWithLength(s, n);
    FZ_ASSERT(j, "%s output does not parse as JSON:\n%s", what, s);
    return j;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const an_catalog *cat = fz_builtin_catalog();
    an_fix_options fo;
    bool unsafe;
    fz_fix_options(data[0], &fo, &unsafe);
    const uint8_t *p = data + 1, *end = data + size;
    const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl || nl == p || memchr(p, 0, (size_t)(nl - p))) return 0;
    char *path = ut_strndup((const char *)p, (size_t)(nl - p));
    const uint8_t *text = nl + 1;
    size_t len = (size_t)(end - text);
    if (!fz_loadable(text, len)) { ut_free(path); return 0; }

    an_file file = {path, AN_LANG_PYTHON, true, {0}};
    an_file_result fr = {0};
    fr.file = &file;
    an_source_init_mem(&fr.src, path, (const char *)text, len);
    an_engine_analyze_source(cat, AN_LANG_PYTHON, &fr.src, NULL, &fo, &fr.diags);
    an_results res = {&fr, 1};
    out_report rep = {.cat = cat, .res = &res, .version = "0.0.0-fuzz", .color = (data[0] & 64) != 0, .srcroot = "/fuzz/"};
    size_t n = fr.diags.len, olen;

    char *o = render(OUT_JSON, &rep, &olen);
    cJSON *j = parse_json("json", o, olen);
    FZ_ASSERT(cJSON_IsArray(j) && (size_t)cJSON_GetArraySize(j) == n, "json: %d entries for %zu findings",
              cJSON_GetArraySize(j), n);
    for (size_t i = 0; i < n; i++) {
        cJSON *e = cJSON_GetArrayItem(j, (int)i);
        const an_diag *d = &fr.diags.items[i];
        FZ_ASSERT(cJSON_GetObjectItem(e, "line")->valuedouble == d->line &&
                      cJSON_GetObjectItem(e, "column")->valuedouble == d->col,
                  "json: entry %zu is not at the finding's position", i);
        FZ_ASSERT(!strcmp(cJSON_GetObjectItem(e, "code")->valuestring, d->rule->code), "json: entry %zu code", i);
    }
    cJSON_Delete(j);
    free(o);

    o = render(OUT_SARIF, &rep, &olen);
    j = parse_json("sarif", o, olen);
    cJSON *results = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "runs"), 0), "results");
    FZ_ASSERT((size_t)cJSON_GetArraySize(results) == n, "sarif: %d results for %zu findings", cJSON_GetArraySize(results), n);
    for (size_t i = 0; i < n; i++) {
        cJSON *loc = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(results, (int)i), "locations"), 0);
        cJSON *uri = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(loc, "physicalLocation"), "artifactLocation"), "uri");
        FZ_ASSERT(cJSON_IsString(uri), "sarif: result %zu without a uri", i);
        for (const char *u = uri->valuestring; *u; u++)
            FZ_ASSERT((unsigned char)*u > 0x20 && (unsigned char)*u < 0x7f, "sarif: uri `%s` is not percent-encoded", uri->valuestring);
    }
    cJSON_Delete(j);
    free(o);

    o = render(OUT_GITHUB, &rep, &olen);
    size_t lines = 0;
    for (size_t i = 0; i < olen; i++) lines += o[i] == '\n';
    FZ_ASSERT(lines == n, "github: %zu lines for %zu findings:\n%s", lines, n, o);
    free(o);
    free(render(OUT_TEXT, &rep, &olen));
    free(render(OUT_CONCISE, &rep, &olen));

    an_diag_list_free(&fr.diags);
    an_source_free(&fr.src);
    ut_free(path);
    return 0;
}
