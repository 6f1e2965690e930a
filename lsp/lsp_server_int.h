/* lsp_server_int: the server's state, shared by the feature files (lsp_diag, lsp_action, lsp_hover). */
#ifndef LSP_SERVER_INT_H
#define LSP_SERVER_INT_H
#include "lsp/lsp_doc.h"
#include "lsp/lsp_io.h"
#include "lsp/lsp_rpc.h"
#include "lsp/lsp_server.h"
#include "lsp/lsp_settings.h"

typedef struct lsp_server {
    const lsp_server_options *opt;
    lsp_reader rd;          /* the client's byte stream */
    UT_VEC(cJSON *) queue;  /* messages read and not yet handled */
    lsp_rpc rpc;
    lsp_docs docs;
    lsp_encoding enc;
    bool initialized;  /* `initialize` answered */
    bool shutdown;     /* `shutdown` received */
    bool exit;
    /* what the client can do */
    bool pull;          /* textDocument/diagnostic: the client pulls, the server does not push */
    bool pull_refresh;  /* workspace/diagnostic/refresh */
    bool apply_edit;    /* workspace/applyEdit */
    bool doc_changes;   /* WorkspaceEdit.documentChanges */
    bool watch_dynamic; /* workspace/didChangeWatchedFiles dynamic registration */
    bool config_pull;   /* workspace/configuration */
    bool markdown;      /* hover in markdown */
    lsp_settings client; /* from initializationOptions / didChangeConfiguration */
    char *root;          /* workspace root path, or NULL */
    bool project_stale;  /* a file the project model reads changed: an_project_refresh before the next use */
    unsigned long long analyses, region_analyses;
    UT_VEC(uint64_t) shown; /* messages shown since the settings last changed (each once, not once per file) */
} lsp_server;

/* log types of window/logMessage */
enum { LSP_LOG_ERROR = 1, LSP_LOG_WARNING = 2, LSP_LOG_INFO = 3, LSP_LOG_DEBUG = 4 };
void lsp_log(lsp_server *s, int type, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Shown to the user (window/showMessage) and logged. */
void lsp_show(lsp_server *s, int type, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Brings a document's findings up to date with its text and settings. false when it cannot be analyzed
 * (too large, not a language xpuify reads): its findings are then empty. */
bool lsp_analyze(lsp_server *s, lsp_doc *doc);
const an_diag_list *lsp_findings(lsp_server *s, lsp_doc *doc);

/* lsp_diag.c */
cJSON *lsp_range_json(const lsp_doc *doc, lsp_encoding enc, uint32_t start, uint32_t end);
cJSON *lsp_diag_json(lsp_server *s, lsp_doc *doc, const an_diag *d);
cJSON *lsp_edits_json(lsp_server *s, lsp_doc *doc, const an_edit *edits, size_t n);
void lsp_publish(lsp_server *s, lsp_doc *doc);
void lsp_publish_clear(lsp_server *s, const char *uri);
void lsp_pull_diagnostics(lsp_server *s, const cJSON *id, const cJSON *params);
void lsp_rule_href(const char *code, char *buf, size_t sz);

/* lsp_action.c */
void lsp_code_action(lsp_server *s, const cJSON *id, const cJSON *params);
void lsp_execute_command(lsp_server *s, const cJSON *id, const cJSON *params);
extern const char *const lsp_commands[];

/* lsp_hover.c */
void lsp_hover(lsp_server *s, const cJSON *id, const cJSON *params);

/* Parameter helpers: NULL / false when missing or of the wrong type. */
const char *lsp_param_str(const cJSON *o, const char *key);
bool lsp_param_pos(const cJSON *o, const char *key, uint32_t *line, uint32_t *character);
lsp_doc *lsp_param_doc(lsp_server *s, const cJSON *params); /* params.textDocument.uri */
#endif
