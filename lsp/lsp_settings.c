/* lsp_settings: parsing and layering of settings. */
#include "lsp/lsp_settings.h"
#include "util/ut_mem.h"
#include <stdio.h>

void lsp_settings_init(lsp_settings *s) {
    memset(s, 0, sizeof *s);
    s->unsafe_fixes = -1;
    s->max_file_size = -1;
    s->debounce_ms = -1;
    s->incremental = -1;
}

void lsp_settings_free(lsp_settings *s) {
    ut_free(s->select);
    ut_free(s->ignore);
    ut_free(s->target);
    ut_free(s->torch_version);
    ut_free(s->helper_module);
    lsp_settings_init(s);
}

static void set_str(char **dst, const char *src) {
    if (!src) return;
    ut_free(*dst);
    *dst = ut_strdup(src);
}

void lsp_settings_merge(lsp_settings *b, const lsp_settings *o) {
    set_str(&b->select, o->select);
    set_str(&b->ignore, o->ignore);
    set_str(&b->target, o->target);
    set_str(&b->torch_version, o->torch_version);
    set_str(&b->helper_module, o->helper_module);
    if (o->unsafe_fixes >= 0) b->unsafe_fixes = o->unsafe_fixes;
    if (o->max_file_size >= 0) b->max_file_size = o->max_file_size;
    if (o->debounce_ms >= 0) b->debounce_ms = o->debounce_ms;
    if (o->incremental >= 0) b->incremental = o->incremental;
}

/* A list given as an array of strings or one comma-separated string. */
static bool list(const cJSON *v, char **out) {
    ut_buf b;
    ut_buf_init(&b);
    if (cJSON_IsString(v)) {
        ut_buf_puts(&b, v->valuestring);
    } else if (cJSON_IsArray(v)) {
        const cJSON *e;
        cJSON_ArrayForEach(e, v) {
            if (!cJSON_IsString(e)) { ut_buf_free(&b); return false; }
            ut_buf_printf(&b, "%s%s", b.len ? "," : "", e->valuestring);
        }
    } else {
        return false;
    }
    ut_free(*out);
    *out = ut_buf_take(&b);
    if (!*out) *out = ut_strdup("");
    return true;
}

static bool size_value(const cJSON *v, long long *out) {
    if (cJSON_IsNumber(v) && v->valuedouble >= 0) { *out = (long long)v->valuedouble; return true; }
    if (!cJSON_IsString(v)) return false;
    char *end;
    long long x = strtoll(v->valuestring, &end, 10);
    if (end == v->valuestring || x < 0) return false;
    if (*end == 'K' || *end == 'k') x <<= 10, end++;
    else if (*end == 'M' || *end == 'm') x <<= 20, end++;
    else if (*end == 'G' || *end == 'g') x <<= 30, end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end) return false;
    *out = x;
    return true;
}

void lsp_settings_from_json(lsp_settings *s, const cJSON *obj, ut_buf *warn) {
    if (!cJSON_IsObject(obj)) return;
    const cJSON *inner = cJSON_GetObjectItemCaseSensitive(obj, "xpuify");
    if (cJSON_IsObject(inner)) obj = inner;
    inner = cJSON_GetObjectItemCaseSensitive(obj, "settings");
    if (cJSON_IsObject(inner)) obj = inner;
    const cJSON *v;
    cJSON_ArrayForEach(v, obj) {
        const char *k = v->string;
        bool ok = true;
        if (!strcmp(k, "select")) ok = list(v, &s->select);
        else if (!strcmp(k, "ignore")) ok = list(v, &s->ignore);
        else if (!strcmp(k, "target")) {
            ok = cJSON_IsString(v) && (!strcmp(v->valuestring, "auto") || !strcmp(v->valuestring, "accelerator") ||
                                       !strcmp(v->valuestring, "compat") || !strcmp(v->valuestring, "none"));
            if (ok) set_str(&s->target, v->valuestring);
        } else if (!strcmp(k, "torchVersion")) {
            int a, b;
            ok = cJSON_IsString(v) && sscanf(v->valuestring, "%d.%d", &a, &b) == 2;
            if (ok) set_str(&s->torch_version, v->valuestring);
        } else if (!strcmp(k, "helperModule")) {
            ok = cJSON_IsString(v) && v->valuestring[0] && strspn(v->valuestring, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == strlen(v->valuestring);
            if (ok) set_str(&s->helper_module, v->valuestring);
        } else if (!strcmp(k, "unsafeFixes")) {
            ok = cJSON_IsBool(v);
            if (ok) s->unsafe_fixes = cJSON_IsTrue(v);
        } else if (!strcmp(k, "maxFileSize")) {
            ok = size_value(v, &s->max_file_size);
        } else if (!strcmp(k, "debounceMs")) {
            ok = cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 10000;
            if (ok) s->debounce_ms = (int)v->valuedouble;
        } else if (!strcmp(k, "incremental")) {
            ok = cJSON_IsBool(v);
            if (ok) s->incremental = cJSON_IsTrue(v);
        } else {
            if (warn) ut_buf_printf(warn, "unknown setting `%s` (known: select, ignore, target, torchVersion, helperModule, unsafeFixes, maxFileSize, debounceMs, incremental)\n", k);
            continue;
        }
        if (!ok && warn) ut_buf_printf(warn, "setting `%s` has a bad value; ignored\n", k);
    }
}
