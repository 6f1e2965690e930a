/* lsp_server: the event loop (read, coalesce, analyze when input is idle), the lifecycle (initialize, shutdown,
 * exit), document synchronization, settings, and method dispatch. One thread: a burst of edits is read
 * completely before the next analysis, requests still queued when their `$/cancelRequest` arrives are answered
 * as cancelled, and analyses are incremental (an_incr), so typing stays responsive. */
#include "lsp/lsp_server_int.h"
#include "analyzer/project/an_project.h"
#include "analyzer/core/an_suppress.h"
#include "analyzer/core/an_deps.h"
#include "analyzer/python/an_pynest.h"
#include "lsp/lsp_io.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <malloc.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

#define SALVAGE_IDLE_MS 500
/* how long the user must pause before a provisional analysis (syntax errors, incremental tree) is settled */
#define SETTLE_IDLE_MS 300

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* ---- logging ------------------------------------------------------------------------------------------------ */

static void vlog(lsp_server *s, const char *method, int type, const char *fmt, va_list ap) {
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_vprintf(&b, fmt, ap);
    if (s->opt->log) {
        fprintf(s->opt->log, "xpuify lsp: %s\n", b.data);
        fflush(s->opt->log);
    }
    if (s->initialized) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddNumberToObject(p, "type", type);
        cJSON_AddItemToObject(p, "message", lsp_json_string(b.data));
        lsp_rpc_notify(&s->rpc, method, p);
    } else if (!s->opt->log) {
        fprintf(stderr, "xpuify lsp: %s\n", b.data);
    }
    ut_buf_free(&b);
}

static void lsp_show_raw(lsp_server *s, int type, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void lsp_show_raw(lsp_server *s, int type, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vlog(s, "window/showMessage", type, fmt, ap);
    va_end(ap);
}

void lsp_log(lsp_server *s, int type, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vlog(s, "window/logMessage", type, fmt, ap);
    va_end(ap);
}

void lsp_show(lsp_server *s, int type, const char *fmt, ...) {
    ut_buf b;
    ut_buf_init(&b);
    va_list ap;
    va_start(ap, fmt);
    ut_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < b.len; i++) h = (h ^ (unsigned char)b.data[i]) * 1099511628211ull;
    bool seen = false;
    for (size_t i = 0; i < s->shown.len && !seen; i++) seen = s->shown.items[i] == h;
    if (!seen) {
        ut_vec_push(&s->shown, h);
        lsp_show_raw(s, type, "%s", b.data);
    } else {
        lsp_log(s, type, "%s", b.data);
    }
    ut_buf_free(&b);
}

/* ---- parameters --------------------------------------------------------------------------------------------- */

const char *lsp_param_str(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool uint_field(const cJSON *o, const char *key, uint32_t *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 4294967295.0) return false;
    *out = (uint32_t)v->valuedouble;
    return true;
}

bool lsp_param_pos(const cJSON *o, const char *key, uint32_t *line, uint32_t *character) {
    const cJSON *p = key ? cJSON_GetObjectItemCaseSensitive(o, key) : o;
    return cJSON_IsObject(p) && uint_field(p, "line", line) && uint_field(p, "character", character);
}

static const char *doc_uri(const cJSON *params) {
    return lsp_param_str(cJSON_GetObjectItemCaseSensitive(params, "textDocument"), "uri");
}

lsp_doc *lsp_param_doc(lsp_server *s, const cJSON *params) {
    const char *uri = doc_uri(params);
    return uri ? lsp_docs_find(&s->docs, uri) : NULL;
}

/* ---- settings ------------------------------------------------------------------------------------------------ */

static void apply_selectors(lsp_server *s, const char *list, bool value, bool *en, const char *what, const char *origin) {
    if (!list) return;
    char *copy = ut_strdup(list), *save = NULL;
    size_t n = an_catalog_count(s->opt->cat);
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        size_t tl = strlen(tok);
        while (tl && tok[tl - 1] == ' ') tok[--tl] = 0;
        if (!tl) continue;
        bool hit = false;
        for (size_t i = 0; i < n; i++)
            if (an_rule_matches_selector(an_catalog_rule(s->opt->cat, i), tok)) en[i] = value, hit = true;
        if (!hit)
            lsp_show(s, LSP_LOG_WARNING, "%s: %s `%s` matches no rule code, code prefix or rule name; ignored", origin,
                     what, tok);
    }
    ut_free(copy);
}

static lsp_config_loader loader(lsp_server *s) { return s->opt->config ? s->opt->config : lsp_config_minimal; }

/* Project values under the client's, for one document. */
static void resolve_settings(lsp_server *s, lsp_doc *doc) {
    if (s->project_stale) { /* a file the project model reads changed: rebuilt, once, as a document needs it */
        an_project_refresh();
        s->project_stale = false;
    }
    lsp_settings eff, proj;
    lsp_settings_init(&eff);
    lsp_settings_init(&proj);
    char *origin = NULL, *error = NULL;
    if (!loader(s)(s->opt->config_ctx, doc->src.path, &proj, &origin, &error)) {
        lsp_show(s, LSP_LOG_ERROR, "%s; its settings are not used", error ? error : "the project configuration is broken");
    } else {
        lsp_settings_merge(&eff, &proj);
    }
    lsp_settings_merge(&eff, &s->client);
    size_t n = an_catalog_count(s->opt->cat);
    ut_free(doc->enabled);
    doc->enabled = ut_calloc(n ? n : 1, sizeof(bool));
    for (size_t i = 0; i < n; i++) doc->enabled[i] = !eff.select;
    const char *where = origin ? origin : "settings";
    apply_selectors(s, eff.select, true, doc->enabled, "select", where);
    apply_selectors(s, eff.ignore, false, doc->enabled, "ignore", where);
    snprintf(doc->helper_module, sizeof doc->helper_module, "%s", eff.helper_module ? eff.helper_module : "xpuify_device");
    const char *target = eff.target ? eff.target : "auto";
    memset(&doc->fix, 0, sizeof doc->fix);
    ut_buf reason;
    ut_buf_init(&reason);
    if (s->opt->choose_fix) {
        s->opt->choose_fix(s->opt->choose_ctx, doc->src.path, target, eff.torch_version, doc->helper_module, &doc->fix,
                           doc->fix_buf, sizeof doc->fix_buf, &reason);
    } else {
        doc->fix.target = !strcmp(target, "none") ? AN_TARGET_NONE
                          : !strcmp(target, "accelerator") ? AN_TARGET_ACCELERATOR
                                                           : AN_TARGET_COMPAT;
        if (eff.torch_version) sscanf(eff.torch_version, "%d.%d", &doc->fix.torch_major, &doc->fix.torch_minor);
        doc->fix.helper_module = doc->helper_module;
        ut_buf_printf(&reason, "%s", target);
    }
    lsp_log(s, LSP_LOG_INFO, "%s: target %s%s%s", doc->src.path, reason.data ? reason.data : target,
            origin ? "; configuration " : "", origin ? origin : "");
    ut_buf_free(&reason);
    doc->unsafe_fixes = eff.unsafe_fixes > 0;
    doc->max_file_size = eff.max_file_size >= 0 ? eff.max_file_size : LSP_DEFAULT_MAX_FILE_SIZE;
    doc->debounce_ms = eff.debounce_ms >= 0 ? eff.debounce_ms : LSP_DEFAULT_DEBOUNCE_MS;
    doc->incremental = eff.incremental != 0;
    doc->settings_ready = true;
    ut_free(origin);
    ut_free(error);
    lsp_settings_free(&eff);
    lsp_settings_free(&proj);
}

static void settings_changed(lsp_server *s) {
    s->shown.len = 0;
    for (size_t i = 0; i < s->docs.items.len; i++) {
        lsp_doc *d = s->docs.items.items[i];
        d->settings_ready = false;
        d->due_ms = 0;
        d->skipped = false;
        lsp_doc_invalidate(d);
    }
    if (s->pull && s->pull_refresh) lsp_rpc_request(&s->rpc, "workspace/diagnostic/refresh", NULL, NULL, NULL);
}

/* A change of what the project model reads (an __init__.py, packaging metadata, the imports of a module: on disk or
 * in an open buffer) can move the helper import of any file: every open document's fixes are computed afresh. */
static void project_changed(lsp_server *s, const char *path) {
    lsp_log(s, LSP_LOG_INFO, "%s: the project model changed; fixes recomputed", path);
    s->project_stale = true;
    for (size_t i = 0; i < s->docs.items.len; i++) {
        lsp_doc *d = s->docs.items.items[i];
        d->settings_ready = false;
        d->due_ms = 0;
        lsp_doc_invalidate(d);
    }
    if (s->pull && s->pull_refresh) lsp_rpc_request(&s->rpc, "workspace/diagnostic/refresh", NULL, NULL, NULL);
}

/* The file at path changed (on disk, or the buffer that stands for it): the open documents whose findings read it
 * (a guard's callee in it) are analyzed again, from scratch. */
static void dependents_changed(lsp_server *s, const char *path, const lsp_doc *except) {
    char real[PATH_MAX];
    const char *alt = realpath(path, real) ? real : path;
    bool any = false;
    for (size_t i = 0; i < s->docs.items.len; i++) {
        lsp_doc *d = s->docs.items.items[i];
        bool hit = false;
        for (size_t k = 0; k < d->deps.len && !hit && d != except; k++)
            hit = !strcmp(d->deps.items[k], path) || !strcmp(d->deps.items[k], alt);
        if (!hit) continue;
        lsp_log(s, LSP_LOG_INFO, "%s: %s, which its findings read, changed; analyzed again", d->src.path, path);
        an_incr_reset(d->inc);
        lsp_doc_invalidate(d);
        d->due_ms = 0;
        any = true;
    }
    if (any && s->pull && s->pull_refresh) lsp_rpc_request(&s->rpc, "workspace/diagnostic/refresh", NULL, NULL, NULL);
}

/* an open Python buffer's text stands for its file in the project model */
static void buffer_model(lsp_server *s, lsp_doc *doc, bool closing) {
    if (doc->lang != AN_LANG_PYTHON || doc->src.path[0] != '/') return;
    dependents_changed(s, doc->src.path, doc);
    if (an_project_overlay(doc->src.path, closing ? NULL : doc->src.text, closing ? 0 : doc->src.len))
        project_changed(s, doc->src.path);
}

static void client_settings(lsp_server *s, const cJSON *obj) {
    lsp_settings fresh;
    lsp_settings_init(&fresh);
    ut_buf warn;
    ut_buf_init(&warn);
    lsp_settings_from_json(&fresh, obj, &warn);
    for (char *line = warn.data, *nl; line && *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl) break;
        *nl = 0;
        lsp_show(s, LSP_LOG_WARNING, "%s", line);
    }
    ut_buf_free(&warn);
    lsp_settings_free(&s->client);
    s->client = fresh;
}

/* ---- analysis ------------------------------------------------------------------------------------------------ */

static const an_diag_list no_findings = {0};

/* the other files the analysis just made read (an_deps), added to the document's */
static void note_deps(lsp_doc *doc) {
    an_deps d = {0};
    an_deps_end(&d);
    for (size_t i = 0; i < d.len; i++) {
        bool known = false;
        for (size_t k = 0; k < doc->deps.len && !known; k++) known = !strcmp(doc->deps.items[k], d.items[i].path);
        if (!known) ut_vec_push(&doc->deps, ut_strdup(d.items[i].path));
    }
    an_deps_free(&d);
}

bool lsp_analyze(lsp_server *s, lsp_doc *doc) {
    if (!doc->settings_ready) resolve_settings(s, doc);
    if (doc->analyzed_gen == doc->gen && doc->settings_ready) return doc->usable;
    doc->analyzed_gen = doc->gen;
    doc->usable = false;
    if (!doc->analyzable) return false;
    if ((long long)doc->src.len > doc->max_file_size) {
        if (!doc->skipped)
            lsp_show(s, LSP_LOG_WARNING, "%s: not analyzed: %u bytes, over the %lld-byte limit (setting maxFileSize)",
                     doc->src.path, doc->src.len, doc->max_file_size);
        doc->skipped = true;
        an_incr_reset(doc->inc);
        return false;
    }
    char *deep = doc->lang == AN_LANG_PYTHON ? an_py_nesting_why(&doc->src) : NULL;
    if (deep) { /* never parsed: tree-sitter does not survive such a file (an_pynest.h) */
        if (!doc->skipped) lsp_show(s, LSP_LOG_WARNING, "%s: %s", doc->src.path, deep);
        ut_free(deep);
        doc->skipped = true;
        an_incr_reset(doc->inc);
        return false;
    }
    doc->skipped = false;
    double t0 = now_ms();
    if (!doc->incremental) an_incr_reset(doc->inc);
    an_deps_begin();
    an_incr_analyze(doc->inc, s->opt->cat, doc->lang, &doc->src, doc->enabled, &doc->fix);
    note_deps(doc);
    doc->settle_ms = an_incr_provisional(doc->inc) ? now_ms() + SETTLE_IDLE_MS : 0;
    const an_incr_stats *st = an_incr_last(doc->inc);
    if (s->opt->log) /* the log file only: one line per analysis would flood the client */
        fprintf(s->opt->log, "xpuify lsp: %s v%d: %s analysis %u-%u of %u bytes%s in %.2f ms%s%s\n", doc->src.path,
                doc->version, st->mode == AN_INCR_REGION ? "region" : st->mode == AN_INCR_FULL ? "full" : "no",
                st->lo, st->hi, doc->src.len, an_incr_provisional(doc->inc) ? " (provisional)" : "", now_ms() - t0,
                st->why ? ": " : "", st->why ? st->why : "");
    s->analyses++;
    if (st->mode == AN_INCR_REGION || st->mode == AN_INCR_UNCHANGED) s->region_analyses++;
    else if (st->mode == AN_INCR_FULL && st->why)
        lsp_log(s, LSP_LOG_DEBUG, "%s: full analysis (%s)", doc->src.path, st->why);
    doc->usable = true;
    return true;
}

const an_diag_list *lsp_findings(lsp_server *s, lsp_doc *doc) {
    return lsp_analyze(s, doc) ? an_incr_diags(doc->inc) : &no_findings;
}

/* Push mode: analyze and publish the documents whose debounce has passed. Returns ms until the next one is
 * due, or -1. */
static double run_due(lsp_server *s, double now) {
    if (!s->initialized) return -1;
    double next = -1;
    for (size_t i = 0; i < s->docs.items.len; i++) {
        lsp_doc *d = s->docs.items.items[i];
        if (d->pending && !s->pull) {
            if (d->due_ms > now) {
                double wait = d->due_ms - now;
                if (next < 0 || wait < next) next = wait;
                continue;
            }
            lsp_publish(s, d);
        }
        if ((s->pull || !d->pending) && d->settle_ms > 0) {
            if (d->settle_ms > now) {
                double wait = d->settle_ms - now;
                if (next < 0 || wait < next) next = wait;
                continue;
            }
            /* the user paused on a broken buffer: replace the provisional result by the fresh analysis */
            d->settle_ms = 0;
            an_deps_begin();
            an_incr_settle(d->inc, s->opt->cat, d->lang, &d->src, d->enabled, &d->fix);
            note_deps(d);
            if (!s->pull) lsp_publish(s, d); /* only when the findings changed */
            else if (s->pull_refresh) lsp_rpc_request(&s->rpc, "workspace/diagnostic/refresh", NULL, NULL, NULL);
        }
    }
    return next;
}

static void schedule(lsp_server *s, lsp_doc *doc) {
    doc->pending = true;
    doc->due_ms = now_ms() + (doc->settings_ready ? doc->debounce_ms : (s->client.debounce_ms > 0 ? s->client.debounce_ms : 0));
}

/* ---- lifecycle ---------------------------------------------------------------------------------------------- */

static bool has_string(const cJSON *arr, const char *s) {
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) if (cJSON_IsString(e) && !strcmp(e->valuestring, s)) return true;
    return false;
}

static const cJSON *path_get(const cJSON *o, const char *path) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    char *save = NULL;
    for (char *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save)) o = cJSON_GetObjectItemCaseSensitive(o, k);
    return o;
}

static bool path_true(const cJSON *o, const char *path) { return cJSON_IsTrue(path_get(o, path)); }

static void on_initialize(lsp_server *s, const cJSON *id, const cJSON *params) {
    const cJSON *caps = cJSON_GetObjectItemCaseSensitive(params, "capabilities");
    const cJSON *encs = path_get(caps, "general.positionEncodings");
    bool offset_ext = false;
    s->enc = LSP_ENC_UTF16;
    if (has_string(encs, "utf-8")) s->enc = LSP_ENC_UTF8;
    else if (has_string(encs, "utf-32")) s->enc = LSP_ENC_UTF32;
    else if (!cJSON_IsArray(encs) && has_string(path_get(caps, "offsetEncoding"), "utf-8"))
        s->enc = LSP_ENC_UTF8, offset_ext = true; /* clangd's extension, before positionEncodings existed */
    s->pull = cJSON_IsObject(path_get(caps, "textDocument.diagnostic"));
    s->pull_refresh = path_true(caps, "workspace.diagnostics.refreshSupport");
    s->apply_edit = path_true(caps, "workspace.applyEdit");
    s->doc_changes = path_true(caps, "workspace.workspaceEdit.documentChanges");
    s->watch_dynamic = path_true(caps, "workspace.didChangeWatchedFiles.dynamicRegistration");
    s->config_pull = path_true(caps, "workspace.configuration");
    s->markdown = has_string(path_get(caps, "textDocument.hover.contentFormat"), "markdown");
    const char *root = lsp_param_str(params, "rootUri");
    const cJSON *folders = cJSON_GetObjectItemCaseSensitive(params, "workspaceFolders");
    if (!root && cJSON_IsArray(folders) && cJSON_GetArraySize(folders) > 0)
        root = lsp_param_str(cJSON_GetArrayItem(folders, 0), "uri");
    if (root) s->root = lsp_uri_to_path(root);
    else if (lsp_param_str(params, "rootPath")) s->root = ut_strdup(lsp_param_str(params, "rootPath"));
    s->initialized = true; /* from here on, log lines go to the client */
    const cJSON *init = cJSON_GetObjectItemCaseSensitive(params, "initializationOptions");
    if (cJSON_IsObject(init)) client_settings(s, init);

    cJSON *r = cJSON_CreateObject();
    cJSON *c = cJSON_AddObjectToObject(r, "capabilities");
    cJSON_AddStringToObject(c, "positionEncoding", lsp_encoding_name(s->enc));
    cJSON *sync = cJSON_AddObjectToObject(c, "textDocumentSync");
    cJSON_AddBoolToObject(sync, "openClose", true);
    cJSON_AddNumberToObject(sync, "change", 2); /* incremental */
    cJSON_AddBoolToObject(cJSON_AddObjectToObject(sync, "save"), "includeText", false);
    cJSON_AddBoolToObject(c, "hoverProvider", true);
    cJSON *ca = cJSON_AddObjectToObject(c, "codeActionProvider");
    cJSON *kinds = cJSON_AddArrayToObject(ca, "codeActionKinds");
    cJSON_AddItemToArray(kinds, cJSON_CreateString("quickfix"));
    cJSON_AddItemToArray(kinds, cJSON_CreateString("source.fixAll"));
    cJSON_AddItemToArray(kinds, cJSON_CreateString("source.fixAll.xpuify"));
    cJSON_AddBoolToObject(ca, "resolveProvider", false);
    cJSON *cmds = cJSON_AddArrayToObject(cJSON_AddObjectToObject(c, "executeCommandProvider"), "commands");
    for (int i = 0; lsp_commands[i]; i++) cJSON_AddItemToArray(cmds, cJSON_CreateString(lsp_commands[i]));
    if (s->pull) {
        cJSON *dp = cJSON_AddObjectToObject(c, "diagnosticProvider");
        cJSON_AddStringToObject(dp, "identifier", "xpuify");
        cJSON_AddBoolToObject(dp, "interFileDependencies", false);
        cJSON_AddBoolToObject(dp, "workspaceDiagnostics", false);
    }
    cJSON *ws = cJSON_AddObjectToObject(c, "workspace");
    cJSON *wf = cJSON_AddObjectToObject(ws, "workspaceFolders");
    cJSON_AddBoolToObject(wf, "supported", false);
    if (offset_ext) cJSON_AddStringToObject(r, "offsetEncoding", "utf-8");
    cJSON *info = cJSON_AddObjectToObject(r, "serverInfo");
    cJSON_AddStringToObject(info, "name", "xpuify");
    cJSON_AddStringToObject(info, "version", s->opt->version ? s->opt->version : "");
    lsp_rpc_reply(&s->rpc, id, r);
    lsp_log(s, LSP_LOG_INFO, "initialized: positions in %s, diagnostics %s, root %s", lsp_encoding_name(s->enc),
            s->pull ? "pulled by the client" : "pushed", s->root ? s->root : "(none)");
}

static void on_configuration(void *ctx, const cJSON *result, const cJSON *error) {
    lsp_server *s = ctx;
    if (error || !cJSON_IsArray(result)) return;
    const cJSON *first = cJSON_GetArrayItem(result, 0);
    if (!cJSON_IsObject(first)) return;
    client_settings(s, first);
    settings_changed(s);
}

static void request_configuration(lsp_server *s) {
    cJSON *p = cJSON_CreateObject();
    cJSON *items = cJSON_AddArrayToObject(p, "items");
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "section", "xpuify");
    cJSON_AddItemToArray(items, it);
    lsp_rpc_request(&s->rpc, "workspace/configuration", p, on_configuration, s);
}

static void on_initialized(lsp_server *s) {
    if (s->watch_dynamic) {
        cJSON *p = cJSON_CreateObject();
        cJSON *regs = cJSON_AddArrayToObject(p, "registrations");
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "id", "xpuify-config-watch");
        cJSON_AddStringToObject(r, "method", "workspace/didChangeWatchedFiles");
        cJSON *w = cJSON_AddArrayToObject(cJSON_AddObjectToObject(r, "registerOptions"), "watchers");
        cJSON *g = cJSON_CreateObject();
        cJSON_AddStringToObject(g, "globPattern", "**/" LSP_CONFIG_NAME);
        cJSON_AddItemToArray(w, g);
        /* what the project model reads: modules (__init__.py among them) and packaging metadata */
        static const char *const model[] = {"**/*.py", "**/setup.py", "**/pyproject.toml", "**/setup.cfg", NULL};
        for (int i = 0; model[i]; i++) {
            g = cJSON_CreateObject();
            cJSON_AddStringToObject(g, "globPattern", model[i]);
            cJSON_AddItemToArray(w, g);
        }
        cJSON_AddItemToArray(regs, r);
        lsp_rpc_request(&s->rpc, "client/registerCapability", p, NULL, NULL);
    }
}

/* ---- document synchronization --------------------------------------------------------------------------------- */

static void on_did_open(lsp_server *s, const cJSON *params) {
    const cJSON *td = cJSON_GetObjectItemCaseSensitive(params, "textDocument");
    const char *uri = lsp_param_str(td, "uri"), *text = lsp_param_str(td, "text");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(td, "version");
    if (!uri || !text) { lsp_log(s, LSP_LOG_ERROR, "didOpen without textDocument.uri and text: ignored"); return; }
    size_t len = strlen(text);
    lsp_doc *doc = lsp_docs_open(&s->docs, uri, lsp_param_str(td, "languageId"), cJSON_IsNumber(ver) ? ver->valueint : 0,
                                 text, len);
    if (doc) buffer_model(s, doc, false);
    schedule(s, doc);
}

static void on_did_change(lsp_server *s, const cJSON *params) {
    lsp_doc *doc = lsp_param_doc(s, params);
    if (!doc) { lsp_log(s, LSP_LOG_WARNING, "didChange for a document that is not open: ignored"); return; }
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(params, "textDocument"), "version");
    const cJSON *changes = cJSON_GetObjectItemCaseSensitive(params, "contentChanges"), *ch;
    if (!cJSON_IsArray(changes)) { lsp_log(s, LSP_LOG_ERROR, "didChange without contentChanges: ignored"); return; }
    cJSON_ArrayForEach(ch, changes) {
        const char *text = lsp_param_str(ch, "text");
        if (!text) { lsp_log(s, LSP_LOG_ERROR, "%s: a change without text: ignored", doc->src.path); continue; }
        const cJSON *range = cJSON_GetObjectItemCaseSensitive(ch, "range");
        uint32_t l0, c0, l1, c1;
        if (!range) {
            lsp_doc_set_text(doc, text, strlen(text));
        } else if (lsp_param_pos(range, "start", &l0, &c0) && lsp_param_pos(range, "end", &l1, &c1)) {
            lsp_doc_change(doc, s->enc, l0, c0, l1, c1, text, strlen(text));
        } else {
            lsp_log(s, LSP_LOG_ERROR, "%s: a change with a malformed range: ignored", doc->src.path);
        }
    }
    if (cJSON_IsNumber(ver)) doc->version = ver->valueint;
    buffer_model(s, doc, false);
    schedule(s, doc);
}

static void on_did_close(lsp_server *s, const cJSON *params) {
    const char *uri = doc_uri(params);
    lsp_doc *doc = uri ? lsp_docs_find(&s->docs, uri) : NULL;
    if (!doc) return;
    buffer_model(s, doc, true);
    lsp_docs_close(&s->docs, uri);
    if (!s->pull) lsp_publish_clear(s, uri);
}

static void on_did_change_configuration(lsp_server *s, const cJSON *params) {
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(params, "settings");
    bool empty = !st || cJSON_IsNull(st) || (cJSON_IsObject(st) && !st->child);
    if (empty && s->config_pull) { request_configuration(s); return; }
    if (cJSON_IsObject(st)) client_settings(s, st);
    settings_changed(s);
}

static void on_watched_files(lsp_server *s, const cJSON *params) {
    const cJSON *changes = cJSON_GetObjectItemCaseSensitive(params, "changes"), *c;
    bool config = false;
    char *model = NULL;
    cJSON_ArrayForEach(c, changes) {
        const char *uri = lsp_param_str(c, "uri");
        size_t n = uri ? strlen(uri) : 0, k = strlen("/" LSP_CONFIG_NAME);
        if (n >= k && !strcmp(uri + n - k, "/" LSP_CONFIG_NAME)) config = true;
        else if (uri) {
            char *path = lsp_uri_to_path(uri);
            if (path[0] == '/') dependents_changed(s, path, NULL);
            if (!model && path[0] == '/' && an_project_file_changed(path)) model = path;
            else ut_free(path);
        }
    }
    if (model) project_changed(s, model);
    ut_free(model);
    if (!config) return;
    lsp_log(s, LSP_LOG_INFO, "%s changed: settings reloaded", LSP_CONFIG_NAME);
    settings_changed(s);
}

/* ---- dispatch ------------------------------------------------------------------------------------------------ */

typedef struct {
    UT_VEC(cJSON *) ids;
} cancel_set;

static bool id_eq(const cJSON *a, const cJSON *b) {
    if (cJSON_IsNumber(a) && cJSON_IsNumber(b)) return a->valuedouble == b->valuedouble;
    if (cJSON_IsString(a) && cJSON_IsString(b)) return !strcmp(a->valuestring, b->valuestring);
    return false;
}

static void handle(lsp_server *s, cJSON *msg, cancel_set *cancelled) {
    if (!cJSON_IsObject(msg)) {
        lsp_rpc_error(&s->rpc, NULL, LSP_INVALID_REQUEST, cJSON_IsArray(msg) ? "batch requests are not supported"
                                                                             : "a message must be a JSON object");
        return;
    }
    if (lsp_rpc_take_response(&s->rpc, msg)) return;
    const cJSON *idv = cJSON_GetObjectItemCaseSensitive(msg, "id");
    const cJSON *id = (cJSON_IsNumber(idv) || cJSON_IsString(idv)) ? idv : NULL;
    bool request = idv != NULL;
    const char *method = lsp_param_str(msg, "method");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
    if (!method) {
        if (request) lsp_rpc_error(&s->rpc, id, LSP_INVALID_REQUEST, "a request needs a string `method`");
        else lsp_log(s, LSP_LOG_ERROR, "ignored a message without `method`");
        return;
    }
    if (request && !id) {
        lsp_rpc_error(&s->rpc, NULL, LSP_INVALID_REQUEST, "%s: `id` must be a number or a string", method);
        return;
    }
    if (!strcmp(method, "exit")) { s->exit = true; return; }
    if (!s->initialized && strcmp(method, "initialize")) {
        if (request) lsp_rpc_error(&s->rpc, id, LSP_SERVER_NOT_INITIALIZED, "%s before initialize", method);
        return;
    }
    if (s->shutdown && request) {
        lsp_rpc_error(&s->rpc, id, LSP_INVALID_REQUEST, "%s after shutdown", method);
        return;
    }
    if (request)
        for (size_t i = 0; i < cancelled->ids.len; i++)
            if (id_eq(cancelled->ids.items[i], id)) {
                lsp_rpc_error(&s->rpc, id, LSP_REQUEST_CANCELLED, "%s cancelled", method);
                return;
            }
    /* JSON-RPC 2.0 lets a parameterless request omit `params`; eglot sends `"params": null` for shutdown */
    if (cJSON_IsNull(params)) params = NULL;
    if (params && !cJSON_IsObject(params) && !cJSON_IsArray(params)) {
        if (request) lsp_rpc_error(&s->rpc, id, LSP_INVALID_PARAMS, "%s: params must be an object, an array or null", method);
        return;
    }
    if (!strcmp(method, "initialize")) {
        if (!request) return;
        if (s->initialized) { lsp_rpc_error(&s->rpc, id, LSP_INVALID_REQUEST, "initialize sent twice"); return; }
        on_initialize(s, id, params);
    } else if (!strcmp(method, "initialized")) {
        on_initialized(s);
    } else if (!strcmp(method, "shutdown")) {
        s->shutdown = true;
        lsp_rpc_reply(&s->rpc, id, NULL);
    } else if (!strcmp(method, "textDocument/didOpen")) {
        on_did_open(s, params);
    } else if (!strcmp(method, "textDocument/didChange")) {
        on_did_change(s, params);
    } else if (!strcmp(method, "textDocument/didClose")) {
        on_did_close(s, params);
    } else if (!strcmp(method, "textDocument/didSave")) {
        /* the text is already in step; a file the editor wrote may be new to the project model (an __init__.py) */
        lsp_doc *doc = lsp_param_doc(s, params);
        if (doc && doc->src.path[0] == '/' && an_project_file_changed(doc->src.path)) project_changed(s, doc->src.path);
    } else if (!strcmp(method, "workspace/didChangeConfiguration")) {
        on_did_change_configuration(s, params);
    } else if (!strcmp(method, "workspace/didChangeWatchedFiles")) {
        on_watched_files(s, params);
    } else if (request && !strcmp(method, "textDocument/diagnostic")) {
        lsp_pull_diagnostics(s, id, params);
    } else if (request && !strcmp(method, "textDocument/codeAction")) {
        lsp_code_action(s, id, params);
    } else if (request && !strcmp(method, "textDocument/hover")) {
        lsp_hover(s, id, params);
    } else if (request && !strcmp(method, "workspace/executeCommand")) {
        lsp_execute_command(s, id, params);
    } else if (request && !strcmp(method, "xpuify/stats")) {
        /* for tests and bug reports: heap in use and how analyses ran */
        cJSON *r = cJSON_CreateObject();
        cJSON_AddNumberToObject(r, "heapBytes", (double)mallinfo2().uordblks);
        cJSON_AddNumberToObject(r, "documents", (double)s->docs.items.len);
        cJSON_AddNumberToObject(r, "analyses", (double)s->analyses);
        cJSON_AddNumberToObject(r, "regionAnalyses", (double)s->region_analyses);
        /* under AddressSanitizer freed memory waits in a quarantine and malloc's count is ASan's: heap and RSS
         * figures say nothing about leaks there (LeakSanitizer does, at exit) */
#if defined(__SANITIZE_ADDRESS__)
        cJSON_AddBoolToObject(r, "sanitized", true);
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
        cJSON_AddBoolToObject(r, "sanitized", true);
#else
        cJSON_AddBoolToObject(r, "sanitized", false);
#endif
#else
        cJSON_AddBoolToObject(r, "sanitized", false);
#endif
        lsp_rpc_reply(&s->rpc, id, r);
    } else if (request) {
        lsp_rpc_error(&s->rpc, id, LSP_METHOD_NOT_FOUND, "xpuify does not implement %s", method);
    } else if (strncmp(method, "$/", 2)) {
        lsp_log(s, LSP_LOG_DEBUG, "ignored notification %s", method);
    }
}

/* A message body: JSON, maybe followed by the next message when its Content-Length was too long. */
static cJSON *parse_body(lsp_server *s, lsp_reader *rd, const char *body, size_t len) {
    const char *end = NULL;
    cJSON *msg = cJSON_ParseWithLengthOpts(body, len, &end, false);
    if (!msg) {
        size_t at = end && end >= body ? (size_t)(end - body) : 0;
        lsp_rpc_error(&s->rpc, NULL, LSP_PARSE_ERROR, "malformed JSON (at byte %zu of a %zu-byte message)", at, len);
        lsp_log(s, LSP_LOG_ERROR, "malformed JSON message of %zu bytes skipped", len);
        return NULL;
    }
    const char *rest = end;
    while (rest < body + len && strchr(" \t\r\n", *rest)) rest++;
    if (rest < body + len) {
        size_t n = (size_t)(body + len - rest);
        if (n >= 15 && !strncasecmp(rest, "content-length:", 15)) {
            lsp_log(s, LSP_LOG_ERROR, "a message's Content-Length was %zu bytes too long; the next message is read from there", n);
            lsp_reader_unread(rd, rest, n);
        } else {
            cJSON_Delete(msg);
            lsp_rpc_error(&s->rpc, NULL, LSP_PARSE_ERROR, "malformed JSON: %zu bytes after the value", n);
            return NULL;
        }
    }
    return msg;
}

static void drain(lsp_server *s, bool salvage) {
    for (;;) {
        char *body, *problem;
        size_t len;
        lsp_read_result r = salvage ? lsp_reader_salvage(&s->rd, &body, &len, &problem)
                                    : lsp_reader_next(&s->rd, &body, &len, &problem);
        salvage = false;
        if (r == LSP_MORE) return;
        if (problem) lsp_log(s, LSP_LOG_ERROR, "input: %s", problem);
        ut_free(problem);
        if (r == LSP_MESSAGE) {
            cJSON *m = parse_body(s, &s->rd, body, len);
            if (m) ut_vec_push(&s->queue, m);
        }
        ut_free(body);
    }
}

static void process(lsp_server *s) {
    /* cancellations first: a request still waiting in this batch is answered as cancelled */
    cancel_set cs = {0};
    for (size_t i = 0; i < s->queue.len; i++) {
        const char *m = lsp_param_str(s->queue.items[i], "method");
        if (m && !strcmp(m, "$/cancelRequest")) {
            const cJSON *id = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(s->queue.items[i], "params"), "id");
            if (id) ut_vec_push(&cs.ids, (cJSON *)id);
        }
    }
    for (size_t i = 0; i < s->queue.len && !s->exit; i++) handle(s, s->queue.items[i], &cs);
    ut_vec_free(&cs.ids);
    for (size_t i = 0; i < s->queue.len; i++) cJSON_Delete(s->queue.items[i]);
    s->queue.len = 0;
}

/* Handles every complete message buffered (a message may put back bytes that belong to the next one). */
static void pump(lsp_server *s, bool salvage) {
    drain(s, salvage);
    while (s->queue.len && !lsp_server_done(s)) {
        process(s);
        drain(s, false);
    }
}

/* ---- the server as a state machine (lsp_server.h) ------------------------------------------------------------- */

lsp_server *lsp_server_new(const lsp_server_options *opt) {
    lsp_server *s = ut_calloc(1, sizeof *s);
    s->opt = opt;
    lsp_rpc_init(&s->rpc, opt->out_fd);
    lsp_settings_init(&s->client);
    lsp_reader_init(&s->rd, opt->in_fd, opt->max_message ? opt->max_message : (size_t)256 << 20);
    return s;
}

void lsp_server_input(lsp_server *s, const char *data, size_t n) {
    if (lsp_server_done(s)) return;
    lsp_reader_push(&s->rd, data, n);
    pump(s, false);
}

void lsp_server_input_idle(lsp_server *s) {
    if (!lsp_server_done(s) && lsp_reader_waiting(&s->rd)) pump(s, true);
}

double lsp_server_due(lsp_server *s, double now) { return lsp_server_done(s) ? -1 : run_due(s, now); }

bool lsp_server_done(const lsp_server *s) { return s->exit || s->rpc.dead; }

int lsp_server_free(lsp_server *s, bool eof) {
    if (eof && !s->exit) lsp_log(s, LSP_LOG_INFO, "end of input without `exit`");
    int rc = s->shutdown ? 0 : 1;
    for (size_t i = 0; i < s->queue.len; i++) cJSON_Delete(s->queue.items[i]);
    ut_vec_free(&s->queue);
    lsp_reader_free(&s->rd);
    lsp_docs_free(&s->docs);
    lsp_settings_free(&s->client);
    lsp_rpc_free(&s->rpc);
    ut_vec_free(&s->shown);
    ut_free(s->root);
    ut_free(s);
    return rc;
}

/* One read(2) from the input, and every message it completes handled: 1 (also when EAGAIN left nothing to read),
 * 0 at the end of input, -1 on a read error. */
static int read_input(lsp_server *s) {
    long n = lsp_reader_fill(&s->rd);
    if (n < 0 && errno != EAGAIN) return -1;
    if (n == 0) return 0;
    pump(s, false);
    return 1;
}

/* The stdio loop: read what is there, handle it, and when the input is idle run what is due. */
int lsp_server_run(const lsp_server_options *opt) {
    signal(SIGPIPE, SIG_IGN);
    lsp_server *s = lsp_server_new(opt);
    double last_input = now_ms();
    bool eof = false;
    while (!lsp_server_done(s)) {
        struct pollfd p = {opt->in_fd, POLLIN, 0};
        /* input already waiting is read before any analysis: a burst of edits costs one analysis */
        if (poll(&p, 1, 0) > 0) {
            int got = read_input(s);
            if (got <= 0) { eof = got == 0; break; }
            last_input = now_ms();
            continue;
        }
        double next = run_due(s, now_ms());
        int timeout = next < 0 ? -1 : (int)ceil(next);
        bool waiting = lsp_reader_waiting(&s->rd);
        if (waiting && (timeout < 0 || timeout > SALVAGE_IDLE_MS)) timeout = SALVAGE_IDLE_MS;
        int r = poll(&p, 1, timeout);
        if (r < 0 && errno != EINTR) break;
        if (r > 0) {
            int got = read_input(s);
            if (got <= 0) { eof = got == 0; break; }
            last_input = now_ms();
        } else if (waiting && now_ms() - last_input >= SALVAGE_IDLE_MS) {
            lsp_server_input_idle(s);
            last_input = now_ms();
        }
    }
    return lsp_server_free(s, eof);
}
