/* lsp_config: where a document's project settings come from. The server asks a loader for the settings that
 * apply to a file; the project configuration system (.xpuify.yml with `extend:`, per-file ignores, ...) plugs
 * in by passing its own loader in lsp_server_options. Until then lsp_config_minimal reads `select`, `ignore`
 * and `target` from the closest .xpuify.yml above the file. A loader is called when a document opens and
 * again for every open document when a watched .xpuify.yml changes. */
#ifndef LSP_CONFIG_H
#define LSP_CONFIG_H
#include "lsp/lsp_settings.h"

/* Fills out with the values the project sets for file_path. *origin (heap): the configuration file used, NULL
 * when none applies. Returns false with *error (heap, "file:line:column: what") when the configuration is
 * broken; the server then uses no project values and shows the error. */
typedef bool (*lsp_config_loader)(void *ctx, const char *file_path, lsp_settings *out, char **origin, char **error);

/* The configuration file name the server watches. */
#define LSP_CONFIG_NAME ".xpuify.yml"

bool lsp_config_minimal(void *ctx, const char *file_path, lsp_settings *out, char **origin, char **error);
#endif
