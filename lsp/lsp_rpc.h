/* lsp_rpc: JSON-RPC 2.0 over the framed stream: replies, errors, notifications, and requests the server sends
 * to the client with their response handlers. */
#ifndef LSP_RPC_H
#define LSP_RPC_H
#include "util/ut_mem.h"
#include <cjson/cJSON.h>
#include <stdbool.h>

/* Error codes of JSON-RPC and the LSP. */
enum {
    LSP_PARSE_ERROR = -32700,
    LSP_INVALID_REQUEST = -32600,
    LSP_METHOD_NOT_FOUND = -32601,
    LSP_INVALID_PARAMS = -32602,
    LSP_INTERNAL_ERROR = -32603,
    LSP_SERVER_NOT_INITIALIZED = -32002,
    LSP_REQUEST_FAILED = -32803,
    LSP_REQUEST_CANCELLED = -32800,
};

typedef void (*lsp_response_fn)(void *ctx, const cJSON *result, const cJSON *error);

typedef struct {
    int id;
    lsp_response_fn fn;
    void *ctx;
} lsp_pending;

typedef struct {
    int fd;
    bool dead;      /* the output is gone */
    int next_id;
    UT_VEC(lsp_pending) pending;
    unsigned long long sent_bytes;
} lsp_rpc;

void lsp_rpc_init(lsp_rpc *r, int fd);
void lsp_rpc_free(lsp_rpc *r);
/* Each takes ownership of the cJSON it is given. id may be NULL (then JSON null). */
void lsp_rpc_reply(lsp_rpc *r, const cJSON *id, cJSON *result);
void lsp_rpc_error(lsp_rpc *r, const cJSON *id, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void lsp_rpc_notify(lsp_rpc *r, const char *method, cJSON *params);
void lsp_rpc_request(lsp_rpc *r, const char *method, cJSON *params, lsp_response_fn fn, void *ctx);
/* If msg is a response to one of our requests, runs its handler and returns true. */
bool lsp_rpc_take_response(lsp_rpc *r, const cJSON *msg);
/* Creates a JSON string, replacing invalid UTF-8 with U+FFFD (source snippets may be cut anywhere). */
cJSON *lsp_json_string(const char *s);
#endif
