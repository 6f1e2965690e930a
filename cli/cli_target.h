/* cli_target: choosing the fix target (auto, accelerator, compat) for check and fix. */
#ifndef CLI_TARGET_H
#define CLI_TARGET_H
#include "analyzer/core/an_engine.h"
#include <sys/stat.h>

typedef enum { CLI_TARGET_AUTO, CLI_TARGET_ACCELERATOR, CLI_TARGET_COMPAT, CLI_TARGET_NONE } cli_target_mode;

typedef struct {
    const char *module; /* helper module name */
    const char *path;   /* forced helper path, or NULL */
} cli_helper_opts;

bool cli_target_parse(const char *s, cli_target_mode *m);
/* cache: for the dry run that finds the newest torch the fixes need (NULL: none) */
void cli_target_choose(cli_target_mode mode, const char *torch_version, const char *const *paths, size_t npaths,
                       const an_catalog *cat, const an_file_list *files, const bool *enabled, an_fix_options *out,
                       ut_buf *reason, struct an_cache *cache);
/* an_options.fix_for_file callback; ctx is a cli_helper_opts */
void cli_target_fix_for_file(void *ctx, const char *path, an_fix_options *fix, char *buf, size_t sz);
/* compat target: per result file whose fixes import the helper module, that module's path when it does not exist
 * yet (what a SARIF fix must create); NULL when no file needs one. Free with cli_target_missing_helpers_free. */
char **cli_target_missing_helpers(const an_results *res, const an_fix_options *fix, const cli_helper_opts *h);
void cli_target_missing_helpers_free(char **paths, size_t n);
#endif
