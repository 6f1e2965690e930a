/* lsp_server: `xpuify lsp`: a Language Server over stdio that reports CUDA-only code as the user types and
 * offers its fixes (quick fixes, ignore comments, fix-all), rule documentation on hover and settings from the
 * client and the project. */
#ifndef LSP_SERVER_H
#define LSP_SERVER_H
#include "analyzer/core/an_rule.h"
#include "lsp/lsp_config.h"
#include <stdio.h>

/* The fix options for a file (what `--target` decides on the command line): target is auto, accelerator,
 * compat or none; torch_version and helper_module may be NULL. reason receives one line for the log. */
typedef void (*lsp_fix_chooser)(void *ctx, const char *path, const char *target, const char *torch_version,
                                const char *helper_module, an_fix_options *out, char *buf, size_t bufsz, ut_buf *reason);

typedef struct {
    int in_fd, out_fd;
    const an_catalog *cat;
    lsp_config_loader config;  /* NULL: lsp_config_minimal */
    void *config_ctx;
    lsp_fix_chooser choose_fix; /* NULL: accelerator/compat as named, auto means compat */
    void *choose_ctx;
    FILE *log;                 /* a copy of every log line (--log FILE), or NULL */
    size_t max_message;        /* bytes; larger messages are skipped */
    const char *version;       /* serverInfo.version */
    bool no_writes;            /* never write a file: the device helper is reported as not written (fuzzing) */
} lsp_server_options;

/* Serves until `exit` or the end of input. Returns the exit status: 0 after shutdown, 1 otherwise. */
int lsp_server_run(const lsp_server_options *opt);

/* The server without the stdio loop: what lsp_server_run does between its read(2) and poll(2) calls, for tests
 * and fuzz/fz_lsp.c. Bytes of the client's stream go in (in_fd is not read); replies, notifications and requests
 * to the client are written, framed, to out_fd. */
typedef struct lsp_server lsp_server;
lsp_server *lsp_server_new(const lsp_server_options *opt);
/* Buffers client bytes and handles every complete message among them. */
void lsp_server_input(lsp_server *s, const char *data, size_t n);
/* The input stayed idle with a message incomplete (the loop waits 500 ms): takes the JSON value its body holds
 * (a Content-Length too long) or skips it, and handles what follows. */
void lsp_server_input_idle(lsp_server *s);
/* Runs what is due at now_ms (CLOCK_MONOTONIC milliseconds; a time far ahead runs everything pending): debounced
 * analyses published, provisional results settled. Returns the milliseconds until the next is due, or -1. */
double lsp_server_due(lsp_server *s, double now_ms);
/* True after `exit`, or when out_fd cannot be written any more: further input is ignored. */
bool lsp_server_done(const lsp_server *s);
/* Frees the server and returns the exit status lsp_server_run would; eof: the input ended (logged unless after
 * `exit`). */
int lsp_server_free(lsp_server *s, bool eof);
#endif
