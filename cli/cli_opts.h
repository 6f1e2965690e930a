/* cli_opts: the options check and fix share (selection, files, output, target) and the run set-up they imply:
 * catalog, enabled rules, file list. */
#ifndef CLI_OPTS_H
#define CLI_OPTS_H
#include "../analyzer/an_engine.h"
#include "../output/out.h"
#include "cli_target.h"

typedef struct {
    out_format format;
    const char *output_file;
    UT_VEC(const char *) paths;
    UT_VEC(const char *) selects;
    UT_VEC(const char *) ignores;
    UT_VEC(const char *) rule_dirs;
    an_walk_options walk;
    size_t max_file_size;
    int threads;
    bool exit_zero, quiet;
    cli_target_mode target;
    const char *torch_version;
    cli_helper_opts helper;
    const char *priority;
    /* set up by cli_opts_prepare */
    an_catalog *cat;
    bool *enabled;
    an_file_list files;
    bool input_error; /* a named path is missing */
    /* results cache (check): --no-cache, --cache-dir (default $XPUIFY_CACHE_DIR or .xpuify_cache) */
    bool no_cache;
    const char *cache_dir;
    struct an_cache *cache; /* outlives the results: freed by cli_opts_free */
} cli_opts;

void cli_opts_init(cli_opts *o);
void cli_opts_free(cli_opts *o);
/* 1: argv[*i] (and maybe its value) consumed; 0: not a shared option; -1: bad value (message printed). */
int cli_opts_parse(cli_opts *o, int argc, char **argv, int *i);
const char *cli_opts_help(void);
/* Loads the catalog, applies --select/--ignore, walks the paths. false: usage/config error (exit 2). */
bool cli_opts_prepare(cli_opts *o);
/* Opens the results cache (NULL with --no-cache) into o->cache. */
struct an_cache *cli_cache_open(cli_opts *o);
/* Writes it; a failure is a warning (the results stand). XPUIFY_CACHE_STATS=1 prints hits and misses. */
void cli_cache_save(cli_opts *o);
/* Reports unreadable files: named ones are errors (returns true), walked ones warnings. */
bool cli_report_unreadable(const cli_opts *o, const an_results *res);
#endif
