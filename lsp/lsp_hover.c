/* lsp_hover: the documentation of the rules whose findings cover the hovered position (their first character
 * included, their end excluded; an empty range answers at its position), and of the rules named in a
 * `# xpuify: ignore[...]` comment under the cursor. */
#include "lsp/lsp_server_int.h"
#include <stdio.h>

static void rule_doc(lsp_server *s, const an_rule *r, const char *message, ut_buf *b) {
    char href[256];
    lsp_rule_href(r->code, href, sizeof href);
    if (b->len) ut_buf_puts(b, s->markdown ? "\n\n---\n\n" : "\n\n");
    if (s->markdown) {
        ut_buf_printf(b, "**%s** `%s` (%s, fix: %s)\n\n", r->code, r->name, an_severity_name(r->severity), an_applicability_name(r->fix));
        if (message) ut_buf_printf(b, "%s\n\n", message);
        ut_buf_printf(b, "%s\n\n", r->summary);
        if (r->doc) ut_buf_printf(b, "%s\n\n", r->doc);
        ut_buf_printf(b, "[%s in the rules reference](%s)", r->code, href);
    } else {
        ut_buf_printf(b, "%s %s (%s, fix: %s)\n\n", r->code, r->name, an_severity_name(r->severity), an_applicability_name(r->fix));
        if (message) ut_buf_printf(b, "%s\n\n", message);
        ut_buf_printf(b, "%s\n\n", r->summary);
        if (r->doc) ut_buf_printf(b, "%s\n\n", r->doc);
        ut_buf_printf(b, "%s", href);
    }
}

/* The rule codes inside `xpuify: ignore[...]` (or disable/enable/ignore-file) around byte at. */
static bool directive_docs(lsp_server *s, lsp_doc *doc, uint32_t at, ut_buf *b, uint32_t *rs, uint32_t *re) {
    uint32_t line, col, ls, le;
    an_source_position(&doc->src, at, &line, &col);
    lsp_line_bytes(&doc->src, line - 1, &ls, &le);
    const char *t = doc->src.text;
    const char *p = memmem(t + ls, le - ls, "xpuify:", 7);
    if (!p || an_incr_kind_at(doc->inc, (uint32_t)(p - t)) != AN_AT_COMMENT) return false;
    const char *open = memchr(p, '[', (size_t)(t + le - p)), *close = open ? memchr(open, ']', (size_t)(t + le - open)) : NULL;
    if (!open || !close || at <= (uint32_t)(open - t) || at > (uint32_t)(close - t)) return false;
    bool any = false;
    for (const char *q = open + 1; q < close;) {
        while (q < close && (*q == ' ' || *q == ',')) q++;
        const char *w = q;
        while (q < close && *q != ',' && *q != ' ') q++;
        if (q == w) continue;
        if (at < (uint32_t)(w - t) || at > (uint32_t)(q - t)) continue;
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(q - w), w);
        const an_rule *r = an_catalog_find(s->opt->cat, name);
        if (!r) continue;
        rule_doc(s, r, NULL, b);
        *rs = (uint32_t)(w - t), *re = (uint32_t)(q - t);
        any = true;
    }
    return any;
}

void lsp_hover(lsp_server *s, const cJSON *id, const cJSON *params) {
    lsp_doc *doc = lsp_param_doc(s, params);
    uint32_t line, ch;
    if (!lsp_param_pos(params, "position", &line, &ch)) {
        lsp_rpc_error(&s->rpc, id, LSP_INVALID_PARAMS, "textDocument/hover needs a position");
        return;
    }
    if (!doc) { lsp_rpc_reply(&s->rpc, id, NULL); return; }
    const an_diag_list *l = lsp_findings(s, doc);
    uint32_t at = lsp_pos_to_byte(&doc->src, s->enc, line, ch);
    ut_buf b;
    ut_buf_init(&b);
    uint32_t rs = UINT32_MAX, re = 0;
    for (size_t i = 0; i < l->len; i++) {
        const an_diag *d = &l->items[i];
        bool hit = (at >= d->start && at < d->end) || (d->start == d->end && at == d->start);
        if (!hit) continue;
        rule_doc(s, d->rule, d->message, &b);
        if (d->start < rs) rs = d->start;
        if (d->end > re) re = d->end;
    }
    if (!b.len && doc->usable) directive_docs(s, doc, at, &b, &rs, &re);
    if (!b.len) { lsp_rpc_reply(&s->rpc, id, NULL); return; }
    cJSON *r = cJSON_CreateObject();
    cJSON *c = cJSON_AddObjectToObject(r, "contents");
    cJSON_AddStringToObject(c, "kind", s->markdown ? "markdown" : "plaintext");
    cJSON_AddItemToObject(c, "value", lsp_json_string(b.data));
    cJSON_AddItemToObject(r, "range", lsp_range_json(doc, s->enc, rs, re));
    ut_buf_free(&b);
    lsp_rpc_reply(&s->rpc, id, r);
}
