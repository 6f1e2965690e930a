/* cli_opts: the options check, fix and report share (selection, files, output, target, configuration) and the run
 * set-up they imply: configuration lookup, catalog (built-in plus user rules), enabled rules per file, file list. */
#ifndef CLI_OPTS_H
#define CLI_OPTS_H
#include "analyzer/core/an_engine.h"
#include "config/cf_config.h"
#include "output/out.h"
#include "cli/cli_target.h"
#include "cli/cli_color.h"

typedef struct {
    out_format format;
    const char *output_file;
    cli_color_mode color; /* --color */
    UT_VEC(const char *) paths;
    UT_VEC(const char *) selects;
    UT_VEC(const char *) ignores;
    UT_VEC(const char *) rule_dirs;
    an_walk_options walk;
    size_t max_file_size;
    int threads;
    bool exit_zero, quiet, verbose, whole_files;
    bool target_set;
    cli_target_mode target;
    const char *torch_version;
    cli_helper_opts helper;
    const char *priority;
    bool priority_set;
    const char *target_text;
    UT_VEC(const char *) fail_on;
    const char *config_file; /* --config FILE */
    bool no_config;          /* --no-config */
    bool no_default_path;    /* --no-default-path: no PATH means no file, not `.` */
    an_c_options c; /* C/C++/CUDA parsing: fast (default) or precise (-p DIR, --precise, --cuda-path) */
    /* set up by cli_opts_prepare */
    double ms_files, ms_rules; /* how long finding the files (with their configurations) and loading the rules took */
    cf_store *store;
    const cf_config *root_cfg;    /* governs the first PATH: run-wide settings (target, helper, priority) */
    const cf_config **file_cfg;   /* per file */
    const bool **file_enabled;    /* per file */
    UT_VEC(bool *) enabled_sets;  /* the distinct arrays file_enabled points into */
    UT_VEC(const cf_config *) set_cfg; /* the configuration of each set */
    an_catalog *cat;
    size_t builtin_rules;         /* rules [0, builtin_rules) are built in */
    bool *enabled;                /* the first path's configuration, without per-file ignores */
    an_file_list files;
    an_skip_list skipped; /* what the walk did not enter (too deep): reported, never dropped */
    bool input_error; /* a named path is missing */
    char helper_buf[4096];
    char module_buf[256];
    /* results cache (check): --no-cache, --cache-dir (default $XPUIFY_CACHE_DIR or .xpuify_cache) */
    bool no_cache;
    const char *cache_dir;
    struct an_cache *cache; /* outlives the results: freed by cli_opts_free */
    int64_t began_ns;       /* CLOCK_REALTIME before the walk (files changed since keep no stamp in the cache) */
} cli_opts;

void cli_opts_init(cli_opts *o);
/* CI=true (GitHub, GitLab, most services) or any value but "", 0 and false: the checkout is untrusted input, and
 * a run that skipped anything is not a clean one. */
bool cli_in_ci(void);
void cli_opts_free(cli_opts *o);
/* 1: argv[*i] (and maybe its value) consumed; 0: not a shared option; -1: bad value (message printed). */
int cli_opts_parse(cli_opts *o, int argc, char **argv, int *i);
const char *cli_opts_help(void);
/* Reads the configuration, loads the catalog, walks the paths, enables rules per file. false: usage/config
 * error (exit 2, message printed). */
bool cli_opts_prepare(cli_opts *o);
/* The configuration store with the command line's overrides (the first step of cli_opts_prepare). */
bool cli_opts_make_store(cli_opts *o);
/* Keeps only the files of o->files (and their per-file data) for which keep[i]. */
void cli_opts_filter_files(cli_opts *o, const bool *keep);
/* Sets each finding's severity from its file's configuration (rule-options). */
void cli_opts_apply_severity(const cli_opts *o, an_results *res);
/* a finding that only records code left as it is by design (XPU812): it fails no run */
bool cli_record_only(const an_diag *d);
/* true when a finding makes the exit status 1 under its file's `fail-on`. */
bool cli_opts_fails(const cli_opts *o, const an_results *res);
/* Opens the results cache (NULL with --no-cache) into o->cache. */
struct an_cache *cli_cache_open(cli_opts *o);
/* Writes it; a failure is a warning (the results stand). XPUIFY_CACHE_STATS=1 prints hits and misses. */
void cli_cache_save(cli_opts *o);
/* Reports what was not checked (unreadable files, directories too deep): named files are errors (returns true),
 * walked ones warnings, errors too under CI=true. */
bool cli_report_unreadable(const cli_opts *o, const an_results *res);
#endif
