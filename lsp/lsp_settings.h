/* lsp_settings: what the user can set: rule selection, fix target, limits. Values come in layers (defaults, the
 * project's configuration, the client's initializationOptions / didChangeConfiguration), each overriding the
 * previous where it sets a value. */
#ifndef LSP_SETTINGS_H
#define LSP_SETTINGS_H
#include "util/ut_buf.h"
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *select;           /* comma-separated selectors (codes, prefixes, names, ALL); NULL: not set */
    char *ignore;
    char *target;           /* auto, accelerator, compat, none */
    char *torch_version;    /* "2.6" */
    char *helper_module;
    int unsafe_fixes;       /* fix-all applies unsafe fixes too; -1: not set */
    long long max_file_size; /* bytes; -1: not set */
    int debounce_ms;        /* -1: not set */
    int incremental;        /* 0: analyze every buffer from scratch (a troubleshooting switch); -1: not set */
} lsp_settings;

void lsp_settings_init(lsp_settings *s);   /* every value unset */
void lsp_settings_free(lsp_settings *s);
/* Values set in over replace those of base. */
void lsp_settings_merge(lsp_settings *base, const lsp_settings *over);
/* Reads a settings object: {"select": [...], ...}, or the same under "xpuify" or "settings". Bad values and
 * unknown keys are reported into warnings (one line each) and left unset. */
void lsp_settings_from_json(lsp_settings *s, const cJSON *obj, ut_buf *warnings);
/* The effective value of an unset field. */
#define LSP_DEFAULT_MAX_FILE_SIZE (10ll << 20)
#define LSP_DEFAULT_DEBOUNCE_MS 0
#endif
