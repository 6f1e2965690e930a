/* cli: the command-line verbs (check, fix, verify, rule, lsp, config, report, ...) and what they share: loading
 * the catalog, parsing --select/--ignore, exit codes. */
#ifndef CLI_H
#define CLI_H
#include "analyzer/core/an_rule.h"
#include <stdio.h>

#define XPUIFY_VERSION "0.1.0"

enum { CLI_EXIT_OK = 0, CLI_EXIT_FINDINGS = 1, CLI_EXIT_USAGE = 2 };

int cli_check(int argc, char **argv);
int cli_rule(int argc, char **argv);
int cli_fix(int argc, char **argv);
int cli_verify(int argc, char **argv);
int cli_config(int argc, char **argv);
int cli_merge_sarif(int argc, char **argv);
int cli_test_rules(int argc, char **argv);
int cli_report(int argc, char **argv);

/* --shard K/N: parses it; the (1-based) share a project path falls in. */
bool cli_parse_shard(const char *v, unsigned *k, unsigned *n);
unsigned cli_shard_of(const char *project_path, unsigned n);
int cli_lsp(int argc, char **argv);

/* The C/C++/CUDA API tables as markdown (docs/c-api-tables.md). */
void cli_ctables_markdown(const an_catalog *cat, FILE *fp);
/* Loads the built-in rules plus any YAML files under the given directories; prints errors; NULL on failure. */
an_catalog *cli_load_catalog(const char *const *rule_dirs, size_t ndirs);
/* The same, also saying how many rules are built in (they come first). */
an_catalog *cli_load_catalog_ex(const char *const *rule_dirs, size_t ndirs, size_t *nbuiltin);
/* Applies comma-separated selectors (codes, code prefixes, names, ALL) to enabled[]. false on an unknown one. */
bool cli_apply_selectors(const an_catalog *cat, const char *list, bool value, bool *enabled, const char *flag);
/* Parses "10M", "512K", "1000" into bytes. */
bool cli_parse_size(const char *s, size_t *out);
/* For options: matches "--name VALUE" and "--name=VALUE"; advances *i. */
bool cli_opt(int argc, char **argv, int *i, const char *name, const char **value);
/* Milliseconds since t0 (CLOCK_MONOTONIC), for -v timings. */
struct timespec;
double cli_ms_since(const struct timespec *t0);
#endif
