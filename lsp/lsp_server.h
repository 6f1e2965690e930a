/* lsp_server: `xpuify lsp`: a Language Server over stdio that reports CUDA-only code as the user types and
 * offers its fixes (quick fixes, ignore comments, fix-all), rule documentation on hover and settings from the
 * client and the project. */
#ifndef LSP_SERVER_H
#define LSP_SERVER_H
#include "../analyzer/an_rule.h"
#include "lsp_config.h"
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
} lsp_server_options;

/* Serves until `exit` or the end of input. Returns the exit status: 0 after shutdown + exit, 1 otherwise. */
int lsp_server_run(const lsp_server_options *opt);
#endif
