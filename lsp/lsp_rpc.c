/* lsp_rpc: writing JSON-RPC messages and matching responses to the server's own requests. */
#include "lsp/lsp_rpc.h"
#include "analyzer/core/an_source.h"
#include "util/ut_buf.h"
#include "lsp/lsp_io.h"
#include <stdio.h>

void lsp_rpc_init(lsp_rpc *r, int fd) {
    memset(r, 0, sizeof *r);
    r->fd = fd;
    r->next_id = 1;
}

void lsp_rpc_free(lsp_rpc *r) { ut_vec_free(&r->pending); }

static void send_json(lsp_rpc *r, cJSON *msg) {
    cJSON_AddStringToObject(msg, "jsonrpc", "2.0");
    char *s = cJSON_PrintUnformatted(msg);
    cJSON_Delete(msg);
    if (!s) return;
    size_t n = strlen(s);
    if (!r->dead && !lsp_write_message(r->fd, s, n)) r->dead = true;
    r->sent_bytes += n;
    cJSON_free(s);
}

static cJSON *id_copy(const cJSON *id) {
    return id && (cJSON_IsNumber(id) || cJSON_IsString(id)) ? cJSON_Duplicate(id, false) : cJSON_CreateNull();
}

void lsp_rpc_reply(lsp_rpc *r, const cJSON *id, cJSON *result) {
    cJSON *m = cJSON_CreateObject();
    cJSON_AddItemToObject(m, "id", id_copy(id));
    cJSON_AddItemToObject(m, "result", result ? result : cJSON_CreateNull());
    send_json(r, m);
}

void lsp_rpc_error(lsp_rpc *r, const cJSON *id, int code, const char *fmt, ...) {
    ut_buf b;
    ut_buf_init(&b);
    va_list ap;
    va_start(ap, fmt);
    ut_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    cJSON *m = cJSON_CreateObject();
    cJSON_AddItemToObject(m, "id", id_copy(id));
    cJSON *e = cJSON_AddObjectToObject(m, "error");
    cJSON_AddNumberToObject(e, "code", code);
    cJSON_AddItemToObject(e, "message", lsp_json_string(b.data ? b.data : ""));
    ut_buf_free(&b);
    send_json(r, m);
}

void lsp_rpc_notify(lsp_rpc *r, const char *method, cJSON *params) {
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "method", method);
    if (params) cJSON_AddItemToObject(m, "params", params);
    send_json(r, m);
}

void lsp_rpc_request(lsp_rpc *r, const char *method, cJSON *params, lsp_response_fn fn, void *ctx) {
    lsp_pending p = {r->next_id++, fn, ctx};
    /* a client that never answers must not make the table grow without bound */
    if (r->pending.len >= 256) memmove(r->pending.items, r->pending.items + 1, --r->pending.len * sizeof(lsp_pending));
    ut_vec_push(&r->pending, p);
    cJSON *m = cJSON_CreateObject();
    cJSON_AddNumberToObject(m, "id", p.id);
    cJSON_AddStringToObject(m, "method", method);
    if (params) cJSON_AddItemToObject(m, "params", params);
    send_json(r, m);
}

bool lsp_rpc_take_response(lsp_rpc *r, const cJSON *msg) {
    if (cJSON_GetObjectItemCaseSensitive(msg, "method")) return false;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(msg, "result");
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(msg, "error");
    if (!res && !err) return false;
    if (cJSON_IsNumber(id))
        for (size_t i = 0; i < r->pending.len; i++)
            if (r->pending.items[i].id == id->valueint) {
                lsp_pending p = r->pending.items[i];
                r->pending.items[i] = r->pending.items[--r->pending.len];
                if (p.fn) p.fn(p.ctx, res, err);
                return true;
            }
    return true; /* a response to nothing we asked: ignore it */
}

cJSON *lsp_json_string(const char *s) {
    size_t n = strlen(s);
    if (an_utf8_invalid_at(s, n) < 0) return cJSON_CreateString(s);
    ut_buf b;
    ut_buf_init(&b);
    while (n) {
        long bad = an_utf8_invalid_at(s, n);
        if (bad < 0) { ut_buf_append(&b, s, n); break; }
        ut_buf_append(&b, s, (size_t)bad);
        ut_buf_puts(&b, "\xEF\xBF\xBD");
        s += bad + 1, n -= (size_t)bad + 1;
    }
    cJSON *j = cJSON_CreateString(b.data ? b.data : "");
    ut_buf_free(&b);
    return j;
}
