/* lsp_action: code actions and commands: a quick fix per fixable finding (the fix an_pyfix computed), "ignore
 * for this line" (writes or extends a `# xpuify: ignore[CODE]` comment), `source.fixAll.xpuify` (the fixpoint
 * of rw_fixer, as `xpuify fix` computes it), and the commands xpuify.applyAll and xpuify.writeHelper. */
#include "lsp/lsp_server_int.h"
#include "rewriters/rw_fixer.h"
#include "analyzer/project/an_project.h"
#include "rewriters/rw_target.h"
#include <stdio.h>
#include <unistd.h>

#define CMD_APPLY_ALL "xpuify.applyAll"
#define CMD_WRITE_HELPER "xpuify.writeHelper"
#define KIND_FIX_ALL "source.fixAll.xpuify"

const char *const lsp_commands[] = {CMD_APPLY_ALL, CMD_WRITE_HELPER, NULL};

/* `only` lists kinds; a kind matches when it equals one or lies below it ("source" covers "source.fixAll.xpuify"). */
static bool wanted(const cJSON *only, const char *kind) {
    if (!cJSON_IsArray(only) || !cJSON_GetArraySize(only)) return true;
    const cJSON *o;
    cJSON_ArrayForEach(o, only) {
        if (!cJSON_IsString(o)) continue;
        size_t n = strlen(o->valuestring);
        if (!strncmp(kind, o->valuestring, n) && (kind[n] == 0 || kind[n] == '.')) return true;
    }
    return false;
}

static cJSON *workspace_edit(lsp_server *s, lsp_doc *doc, cJSON *edits) {
    cJSON *we = cJSON_CreateObject();
    if (s->doc_changes) {
        cJSON *dc = cJSON_AddArrayToObject(we, "documentChanges");
        cJSON *tde = cJSON_CreateObject();
        cJSON *td = cJSON_AddObjectToObject(tde, "textDocument");
        cJSON_AddStringToObject(td, "uri", doc->uri);
        cJSON_AddNumberToObject(td, "version", doc->version);
        cJSON_AddItemToObject(tde, "edits", edits);
        cJSON_AddItemToArray(dc, tde);
    } else {
        cJSON_AddItemToObject(cJSON_AddObjectToObject(we, "changes"), doc->uri, edits);
    }
    return we;
}

/* The compat helper module a fixed file imports, when it does not exist yet. */
static char *missing_helper(lsp_doc *doc, const char *fixed_text) {
    if (doc->fix.target != AN_TARGET_COMPAT || doc->src.path[0] != '/') return NULL;
    const char *imp = doc->fix.helper_import;
    char def[256];
    snprintf(def, sizeof def, "import %s", doc->fix.helper_module ? doc->fix.helper_module : doc->helper_module);
    if (!an_helper_import_in(fixed_text, strlen(fixed_text), imp ? imp : def) && !strstr(fixed_text, def)) return NULL;
    an_helper_place pl;
    an_project_helper_place(an_project_shared(doc->src.path), doc->src.path, doc->helper_module, NULL, &pl);
    char *path = pl.path && access(pl.path, F_OK) ? ut_strdup(pl.path) : NULL;
    an_helper_place_free(&pl);
    return path;
}

static void add_helper_command(cJSON *action, lsp_doc *doc, const char *helper) {
    cJSON *c = cJSON_AddObjectToObject(action, "command");
    char title[512];
    snprintf(title, sizeof title, "Write the device helper %s", helper);
    cJSON_AddStringToObject(c, "title", title);
    cJSON_AddStringToObject(c, "command", CMD_WRITE_HELPER);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(c, "arguments"), cJSON_CreateString(doc->uri));
}

static bool fix_imports_helper(lsp_doc *doc, const an_fix *f) {
    if (doc->fix.target != AN_TARGET_COMPAT) return false;
    for (size_t i = 0; i < f->edits.len; i++)
        if (f->edits.items[i].text && strstr(f->edits.items[i].text, "import ") &&
            strstr(f->edits.items[i].text, doc->helper_module))
            return true;
    return false;
}

/* ---- ignore for this line ------------------------------------------------------------------------------------ */

/* The edit that hides a finding with a suppression comment: extend the line's `# xpuify: ignore[...]`, append
 * one at the end of the line, or put one alone on the line above; false where none would work (inside a
 * multi-line string, after a line continuation). */
static bool ignore_edit(lsp_doc *doc, const an_diag *d, an_edit *out) {
    uint32_t line, col;
    an_source_position(&doc->src, d->start, &line, &col);
    uint32_t ls, le;
    lsp_line_bytes(&doc->src, line - 1, &ls, &le);
    const char *t = doc->src.text;
    char buf[160];
    for (const char *p = t + ls; p < t + le && (p = memmem(p, (size_t)(t + le - p), "xpuify: ignore", 14)); p++) {
        if (an_incr_kind_at(doc->inc, (uint32_t)(p - t)) != AN_AT_COMMENT) continue;
        const char *q = p + 14;
        if (q >= t + le || *q != '[') return false; /* a bare `ignore` already covers every rule */
        const char *close = memchr(q, ']', (size_t)(t + le - q));
        if (!close) return false;
        bool empty = close == q + 1;
        snprintf(buf, sizeof buf, "%s%s", empty ? "" : ", ", d->rule->code);
        out->start = out->end = (uint32_t)(close - t);
        out->text = ut_strdup(buf);
        return true;
    }
    uint32_t last = le;
    while (last > ls && (t[last - 1] == ' ' || t[last - 1] == '\t')) last--;
    bool tail_code = last == ls || an_incr_kind_at(doc->inc, last - 1) == AN_AT_CODE;
    bool open_string = le < doc->src.len && an_incr_kind_at(doc->inc, le) == AN_AT_STRING;
    bool continued = last > ls && t[last - 1] == '\\';
    if (tail_code && !open_string && !continued) {
        snprintf(buf, sizeof buf, "  # xpuify: ignore[%s]", d->rule->code);
        out->start = out->end = last;
        out->text = ut_strdup(buf);
        return true;
    }
    if (ls > 0 && an_incr_kind_at(doc->inc, ls - 1) == AN_AT_STRING) return false;
    uint32_t prev = ls;
    while (prev > 0 && (t[prev - 1] == '\n' || t[prev - 1] == '\r')) prev--;
    if (prev > 0 && t[prev - 1] == '\\') return false; /* the line continues the one above */
    uint32_t ind = ls;
    while (ind < le && (t[ind] == ' ' || t[ind] == '\t')) ind++;
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_append(&b, t + ls, ind - ls);
    ut_buf_printf(&b, "# xpuify: ignore[%s]\n", d->rule->code);
    out->start = out->end = ls;
    out->text = ut_buf_take(&b);
    return true;
}

/* ---- fix-all ---------------------------------------------------------------------------------------------- */

/* The fix-all result as one edit over the changed middle of the text; false when nothing changes. */
static bool fix_all(lsp_server *s, lsp_doc *doc, an_edit *out, char **fixed, size_t *count) {
    rw_file_fix ff;
    rw_fix_source(s->opt->cat, doc->lang, &doc->src, doc->enabled, &doc->fix, doc->unsafe_fixes, &ff);
    if (ff.error) lsp_show(s, LSP_LOG_ERROR, "%s: %s", doc->src.path, ff.error);
    if (!ff.text) { rw_file_fix_free(&ff); return false; }
    const char *a = doc->src.text, *b = ff.text;
    size_t na = doc->src.len, nb = ff.len, pre = 0, suf = 0;
    while (pre < na && pre < nb && a[pre] == b[pre]) pre++;
    while (suf < na - pre && suf < nb - pre && a[na - 1 - suf] == b[nb - 1 - suf]) suf++;
    /* keep the edit on code point boundaries */
    while (pre > 0 && ((unsigned char)a[pre] & 0xC0) == 0x80) pre--;
    while (suf > 0 && ((unsigned char)a[na - suf] & 0xC0) == 0x80) suf--;
    out->start = (uint32_t)pre;
    out->end = (uint32_t)(na - suf);
    out->text = ut_strndup(b + pre, nb - suf - pre);
    *count = ff.fixed;
    *fixed = ff.text;
    ff.text = NULL;
    rw_file_fix_free(&ff);
    return true;
}

static bool countable(const lsp_doc *doc, const an_diag *d) {
    return d->fix && d->fix->edits.len && (d->fix->applicability == AN_FIX_SAFE || (doc->unsafe_fixes && d->fix->applicability == AN_FIX_UNSAFE));
}

static cJSON *fix_all_action(lsp_server *s, lsp_doc *doc) {
    an_edit e;
    char *fixed;
    size_t n;
    if (!fix_all(s, doc, &e, &fixed, &n)) return NULL;
    cJSON *a = cJSON_CreateObject();
    char title[128];
    snprintf(title, sizeof title, "Fix all auto-fixable xpuify findings (%zu)", n);
    cJSON_AddStringToObject(a, "title", title);
    cJSON_AddStringToObject(a, "kind", KIND_FIX_ALL);
    cJSON_AddItemToObject(a, "edit", workspace_edit(s, doc, lsp_edits_json(s, doc, &e, 1)));
    char *helper = missing_helper(doc, fixed);
    if (helper) add_helper_command(a, doc, helper);
    ut_free(helper);
    ut_free(e.text);
    ut_free(fixed);
    return a;
}

/* ---- textDocument/codeAction ------------------------------------------------------------------------------ */

/* The client's own copy of a diagnostic for a finding (code and range equal), to echo back. */
static const cJSON *client_diag(lsp_server *s, lsp_doc *doc, const cJSON *ctx_diags, const an_diag *d) {
    const cJSON *c;
    cJSON_ArrayForEach(c, ctx_diags) {
        const char *code = lsp_param_str(c, "code");
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(c, "range");
        uint32_t l0, c0, l1, c1;
        if (!code || strcmp(code, d->rule->code) || !lsp_param_pos(r, "start", &l0, &c0) || !lsp_param_pos(r, "end", &l1, &c1)) continue;
        if (lsp_pos_to_byte(&doc->src, s->enc, l0, c0) == d->start && lsp_pos_to_byte(&doc->src, s->enc, l1, c1) == d->end) return c;
    }
    return NULL;
}

void lsp_code_action(lsp_server *s, const cJSON *id, const cJSON *params) {
    lsp_doc *doc = lsp_param_doc(s, params);
    const cJSON *range = cJSON_GetObjectItemCaseSensitive(params, "range");
    uint32_t l0, c0, l1, c1;
    if (!lsp_param_pos(range, "start", &l0, &c0) || !lsp_param_pos(range, "end", &l1, &c1)) {
        lsp_rpc_error(&s->rpc, id, LSP_INVALID_PARAMS, "textDocument/codeAction needs a range");
        return;
    }
    cJSON *actions = cJSON_CreateArray();
    if (!doc) { lsp_rpc_reply(&s->rpc, id, actions); return; }
    const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(params, "context");
    const cJSON *only = cJSON_GetObjectItemCaseSensitive(ctx, "only");
    const cJSON *ctx_diags = cJSON_GetObjectItemCaseSensitive(ctx, "diagnostics");
    const an_diag_list *l = lsp_findings(s, doc);
    uint32_t a = lsp_pos_to_byte(&doc->src, s->enc, l0, c0), b = lsp_pos_to_byte(&doc->src, s->enc, l1, c1);
    if (b < a) { uint32_t t = a; a = b; b = t; }
    bool quick = wanted(only, "quickfix"), any_fixable = false;
    for (size_t i = 0; i < l->len; i++) {
        const an_diag *d = &l->items[i];
        any_fixable |= countable(doc, d);
        if (!quick || d->start > b || d->end < a) continue;
        const cJSON *cd = client_diag(s, doc, ctx_diags, d);
        if (d->fix && d->fix->edits.len) {
            cJSON *act = cJSON_CreateObject();
            char title[600];
            snprintf(title, sizeof title, "%s%s", d->fix->title ? d->fix->title : "Fix", d->fix->applicability == AN_FIX_UNSAFE ? " (unsafe: review the change)" : "");
            cJSON_AddItemToObject(act, "title", lsp_json_string(title));
            cJSON_AddStringToObject(act, "kind", "quickfix");
            cJSON_AddItemToArray(cJSON_AddArrayToObject(act, "diagnostics"), cd ? cJSON_Duplicate(cd, true) : lsp_diag_json(s, doc, d));
            if (d->fix->applicability == AN_FIX_SAFE) cJSON_AddBoolToObject(act, "isPreferred", true);
            cJSON_AddItemToObject(act, "edit", workspace_edit(s, doc, lsp_edits_json(s, doc, d->fix->edits.items, d->fix->edits.len)));
            if (fix_imports_helper(doc, d->fix)) {
                an_helper_place pl;
                an_project_helper_place(an_project_shared(doc->src.path), doc->src.path, doc->helper_module, NULL, &pl);
                if (doc->src.path[0] == '/' && pl.path && access(pl.path, F_OK)) add_helper_command(act, doc, pl.path);
                an_helper_place_free(&pl);
            }
            cJSON_AddItemToArray(actions, act);
        }
        an_edit ig;
        if (!d->rule->builtin && doc->lang == AN_LANG_PYTHON && ignore_edit(doc, d, &ig)) {
            cJSON *act = cJSON_CreateObject();
            char title[200];
            snprintf(title, sizeof title, "Ignore %s (%s) for this line", d->rule->code, d->rule->name);
            cJSON_AddStringToObject(act, "title", title);
            cJSON_AddStringToObject(act, "kind", "quickfix");
            cJSON_AddItemToArray(cJSON_AddArrayToObject(act, "diagnostics"), cd ? cJSON_Duplicate(cd, true) : lsp_diag_json(s, doc, d));
            cJSON_AddItemToObject(act, "edit", workspace_edit(s, doc, lsp_edits_json(s, doc, &ig, 1)));
            ut_free(ig.text);
            cJSON_AddItemToArray(actions, act);
        }
    }
    /* fix-all when asked for by kind, or offered beside the quick fixes when something is fixable */
    bool asked = cJSON_IsArray(only) && cJSON_GetArraySize(only) > 0 && wanted(only, KIND_FIX_ALL);
    if (doc->usable && (asked || (!cJSON_GetArraySize(only) && any_fixable))) {
        cJSON *fa = fix_all_action(s, doc);
        if (fa) cJSON_AddItemToArray(actions, fa);
    }
    lsp_rpc_reply(&s->rpc, id, actions);
}

/* ---- workspace/executeCommand ------------------------------------------------------------------------------ */

static lsp_doc *arg_doc(lsp_server *s, const cJSON *args) {
    const cJSON *a = cJSON_GetArrayItem(args, 0);
    const char *uri = cJSON_IsString(a) ? a->valuestring : lsp_param_str(a, "uri");
    if (!uri) uri = lsp_param_str(cJSON_GetObjectItemCaseSensitive(a, "textDocument"), "uri");
    return uri ? lsp_docs_find(&s->docs, uri) : NULL;
}

static bool write_helper(lsp_server *s, lsp_doc *doc) {
    an_helper_place pl;
    an_project_helper_place(an_project_shared(doc->src.path), doc->src.path, doc->helper_module, NULL, &pl);
    char *why = NULL;
    if (!pl.path) {
        lsp_show(s, LSP_LOG_ERROR, "%s: no device helper: %s", doc->src.path, pl.withheld ? pl.withheld : "");
        an_helper_place_free(&pl);
        return false;
    }
    int w = s->opt->no_writes ? (why = ut_strdup("this server writes no files"), -1)
                              : rw_helper_write(pl.path, "cuda,xpu,mps,cpu", &why);
    if (w < 0) lsp_show(s, LSP_LOG_ERROR, "%s: cannot write the device helper: %s", pl.path, why ? why : "");
    else if (w > 0) lsp_log(s, LSP_LOG_INFO, "wrote the device helper %s", pl.path);
    ut_free(why);
    an_helper_place_free(&pl);
    return w >= 0;
}

static void on_applied(void *ctx, const cJSON *result, const cJSON *error) {
    lsp_server *s = ctx;
    if (error) lsp_log(s, LSP_LOG_ERROR, "the client could not apply the fixes");
    else if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(result, "applied")))
        lsp_log(s, LSP_LOG_WARNING, "the client did not apply the fixes: %s",
                lsp_param_str(result, "failureReason") ? lsp_param_str(result, "failureReason") : "no reason given");
}

void lsp_execute_command(lsp_server *s, const cJSON *id, const cJSON *params) {
    const char *cmd = lsp_param_str(params, "command");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
    if (!cmd) { lsp_rpc_error(&s->rpc, id, LSP_INVALID_PARAMS, "workspace/executeCommand needs a command"); return; }
    bool apply = !strcmp(cmd, CMD_APPLY_ALL), helper = !strcmp(cmd, CMD_WRITE_HELPER);
    if (!apply && !helper) { lsp_rpc_error(&s->rpc, id, LSP_INVALID_PARAMS, "unknown command `%s`", cmd); return; }
    lsp_doc *doc = arg_doc(s, args);
    if (!doc) { lsp_rpc_error(&s->rpc, id, LSP_INVALID_PARAMS, "%s: the first argument must name an open document", cmd); return; }
    if (!doc->settings_ready) lsp_analyze(s, doc);
    if (helper) {
        if (doc->src.path[0] != '/') { lsp_rpc_error(&s->rpc, id, LSP_REQUEST_FAILED, "%s: not a file", doc->uri); return; }
        if (!write_helper(s, doc)) { lsp_rpc_error(&s->rpc, id, LSP_REQUEST_FAILED, "the device helper could not be written"); return; }
        lsp_rpc_reply(&s->rpc, id, NULL);
        return;
    }
    if (!s->apply_edit) { lsp_rpc_error(&s->rpc, id, LSP_REQUEST_FAILED, "the client cannot apply edits (workspace/applyEdit)"); return; }
    if (!lsp_analyze(s, doc)) { lsp_rpc_error(&s->rpc, id, LSP_REQUEST_FAILED, "%s is not analyzed (too large, or not a language xpuify reads)", doc->uri); return; }
    an_edit e;
    char *fixed;
    size_t n;
    if (!fix_all(s, doc, &e, &fixed, &n)) { lsp_rpc_reply(&s->rpc, id, NULL); return; }
    char *h = missing_helper(doc, fixed);
    if (h) write_helper(s, doc);
    ut_free(h);
    cJSON *p = cJSON_CreateObject();
    char label[128];
    snprintf(label, sizeof label, "xpuify: fix %zu finding%s", n, n == 1 ? "" : "s");
    cJSON_AddStringToObject(p, "label", label);
    cJSON_AddItemToObject(p, "edit", workspace_edit(s, doc, lsp_edits_json(s, doc, &e, 1)));
    lsp_rpc_request(&s->rpc, "workspace/applyEdit", p, on_applied, s);
    ut_free(e.text);
    ut_free(fixed);
    lsp_rpc_reply(&s->rpc, id, NULL);
}
