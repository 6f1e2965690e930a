/* lsp_diag: findings as LSP diagnostics (code, codeDescription.href to the rule's documentation, source
 * "xpuify", the fix in `data`), pushed with publishDiagnostics or pulled with textDocument/diagnostic. */
#include "lsp/lsp_server_int.h"
#include <stdio.h>

void lsp_rule_href(const char *code, char *buf, size_t sz) {
    snprintf(buf, sz, "https://github.com/xpuify/xpuify/blob/main/docs/rules.md#%s", code);
}

static cJSON *pos_json(const lsp_doc *doc, lsp_encoding enc, uint32_t byte) {
    uint32_t l, c;
    lsp_pos_from_byte(&doc->src, enc, byte, &l, &c);
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "line", l);
    cJSON_AddNumberToObject(p, "character", c);
    return p;
}

cJSON *lsp_range_json(const lsp_doc *doc, lsp_encoding enc, uint32_t start, uint32_t end) {
    cJSON *r = cJSON_CreateObject();
    cJSON_AddItemToObject(r, "start", pos_json(doc, enc, start));
    cJSON_AddItemToObject(r, "end", pos_json(doc, enc, end));
    return r;
}

cJSON *lsp_edits_json(lsp_server *s, lsp_doc *doc, const an_edit *edits, size_t n) {
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToObject(e, "range", lsp_range_json(doc, s->enc, edits[i].start, edits[i].end));
        cJSON_AddItemToObject(e, "newText", lsp_json_string(edits[i].text ? edits[i].text : ""));
        cJSON_AddItemToArray(arr, e);
    }
    return arr;
}

cJSON *lsp_diag_json(lsp_server *s, lsp_doc *doc, const an_diag *d) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "range", lsp_range_json(doc, s->enc, d->start, d->end));
    cJSON_AddNumberToObject(o, "severity", d->rule->severity == AN_SEV_ERROR ? 1 : d->rule->severity == AN_SEV_WARNING ? 2 : 3);
    cJSON_AddStringToObject(o, "code", d->rule->code);
    char href[256];
    lsp_rule_href(d->rule->code, href, sizeof href);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "codeDescription"), "href", href);
    cJSON_AddStringToObject(o, "source", "xpuify");
    cJSON_AddItemToObject(o, "message", lsp_json_string(d->message ? d->message : ""));
    cJSON *data = cJSON_AddObjectToObject(o, "data");
    cJSON_AddStringToObject(data, "name", d->rule->name);
    if (d->fix && d->fix->edits.len) {
        cJSON *f = cJSON_AddObjectToObject(data, "fix");
        cJSON_AddItemToObject(f, "title", lsp_json_string(d->fix->title ? d->fix->title : ""));
        cJSON_AddStringToObject(f, "applicability", an_applicability_name(d->fix->applicability));
        if (d->fix->min_torch) cJSON_AddStringToObject(f, "minTorch", d->fix->min_torch);
        cJSON_AddItemToObject(f, "edits", lsp_edits_json(s, doc, d->fix->edits.items, d->fix->edits.len));
    } else {
        cJSON_AddNullToObject(data, "fix");
    }
    return o;
}

static cJSON *diag_array(lsp_server *s, lsp_doc *doc) {
    const an_diag_list *l = lsp_findings(s, doc);
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < l->len; i++) cJSON_AddItemToArray(arr, lsp_diag_json(s, doc, &l->items[i]));
    return arr;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

/* What a publication says, as a hash: the version and every finding with its fix. */
static uint64_t findings_hash(const lsp_doc *doc, const an_diag_list *l) {
    uint64_t h = fnv(1469598103934665603ull, &doc->version, sizeof doc->version);
    h = fnv(h, &l->len, sizeof l->len);
    for (size_t i = 0; i < l->len; i++) {
        const an_diag *d = &l->items[i];
        h = fnv(h, d->rule->code, strlen(d->rule->code));
        h = fnv(h, &d->start, sizeof d->start);
        h = fnv(h, &d->end, sizeof d->end);
        if (d->message) h = fnv(h, d->message, strlen(d->message));
        if (!d->fix) continue;
        for (size_t k = 0; k < d->fix->edits.len; k++) {
            const an_edit *e = &d->fix->edits.items[k];
            h = fnv(h, &e->start, sizeof e->start);
            h = fnv(h, &e->end, sizeof e->end);
            if (e->text) h = fnv(h, e->text, strlen(e->text));
        }
    }
    return h;
}

void lsp_publish(lsp_server *s, lsp_doc *doc) {
    const an_diag_list *l = lsp_findings(s, doc);
    doc->pending = false;
    uint64_t h = findings_hash(doc, l);
    if (h == doc->published && doc->published) return; /* the client has exactly this */
    doc->published = h;
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "uri", doc->uri);
    cJSON_AddNumberToObject(p, "version", doc->version);
    cJSON_AddItemToObject(p, "diagnostics", diag_array(s, doc));
    lsp_rpc_notify(&s->rpc, "textDocument/publishDiagnostics", p);
}

void lsp_publish_clear(lsp_server *s, const char *uri) {
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "uri", uri);
    cJSON_AddArrayToObject(p, "diagnostics");
    lsp_rpc_notify(&s->rpc, "textDocument/publishDiagnostics", p);
}

void lsp_pull_diagnostics(lsp_server *s, const cJSON *id, const cJSON *params) {
    lsp_doc *doc = lsp_param_doc(s, params);
    if (!doc) {
        lsp_rpc_error(&s->rpc, id, LSP_INVALID_PARAMS, "textDocument/diagnostic: the document is not open");
        return;
    }
    lsp_analyze(s, doc);
    char rid[64];
    snprintf(rid, sizeof rid, "%llu", (unsigned long long)doc->gen);
    const char *prev = lsp_param_str(params, "previousResultId");
    cJSON *r = cJSON_CreateObject();
    if (prev && !strcmp(prev, rid)) {
        cJSON_AddStringToObject(r, "kind", "unchanged");
        cJSON_AddStringToObject(r, "resultId", rid);
    } else {
        cJSON_AddStringToObject(r, "kind", "full");
        cJSON_AddStringToObject(r, "resultId", rid);
        cJSON_AddItemToObject(r, "items", diag_array(s, doc));
    }
    lsp_rpc_reply(&s->rpc, id, r);
}
