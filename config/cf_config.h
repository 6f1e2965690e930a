/* cf_config: `.xpuify.yml` project configuration (or the `[tool.xpuify]` table of a pyproject.toml, cf_toml; in one
 * directory .xpuify.yml wins): discovery (the closest file above each source file wins; `extend:`
 * inherits from another file), parsing with libyaml (errors name file:line:column), command-line overrides, and
 * what a configuration means for one file (enabled rules, severities, exclusion). Every value remembers where it
 * came from, for `xpuify config`. Used by the CLI and meant for the language server: it has no CLI state.
 *
 * Keys (all optional):
 *   extend: PATH                 inherit this file's settings (relative to the extending file); keys set here win
 *   select: [SEL, ...]           only these rules (codes, code prefixes, names, ALL)
 *   ignore: [SEL, ...]           not these rules
 *   per-file-ignores: {GLOB: [SEL, ...]}   rules off for matching files (globs relative to the file's directory)
 *   exclude: [GLOB, ...]         paths not to check (relative to the file's directory)
 *   target: auto|accelerator|compat|none   what fixes call
 *   torch-version: "2.6"         oldest torch the project supports
 *   device-priority: [cuda, xpu, mps, cpu] device order of the compat helper
 *   helper-path: PATH            where the compat helper module goes (a .py file; relative to the file's directory)
 *   rule-options: {SEL: {severity: error|warning|info}}   per-rule options
 *   rule-dirs: [DIR, ...]        directories of user rules (YAML, same format as rules/)
 *   fail-on: error|warning|info  the least severity that makes the exit status 1 (default info: any finding) */
#ifndef CF_CONFIG_H
#define CF_CONFIG_H
#include "analyzer/core/an_rule.h"
#include "util/ut_buf.h"
#include <stdio.h>

#define CF_FILE_NAME ".xpuify.yml"
#define CF_PYPROJECT "pyproject.toml" /* its [tool.xpuify] table, when it has one; .xpuify.yml wins in one directory */

typedef enum {
    CF_EXTEND, CF_SELECT, CF_IGNORE, CF_PER_FILE_IGNORES, CF_EXCLUDE, CF_TARGET, CF_TORCH_VERSION,
    CF_DEVICE_PRIORITY, CF_HELPER_PATH, CF_RULE_OPTIONS, CF_RULE_DIRS, CF_FAIL_ON, CF__COUNT
} cf_key;

/* Where a value came from: a file position, the command line (file "command line", line 0), or the default
 * (file NULL). */
typedef struct {
    const char *file; /* owned by the store */
    int line, col;
} cf_origin;

typedef struct {
    char *text;
    cf_origin origin;
} cf_str;

typedef UT_VEC(cf_str) cf_strs;

typedef struct {
    cf_str pattern;
    char *base; /* absolute directory the pattern is relative to */
    cf_strs selectors;
} cf_per_file;

typedef struct {
    cf_str selector;
    bool has_severity;
    an_severity severity;
} cf_rule_option;

typedef struct cf_config {
    const char *path;          /* the file, absolute (NULL: built-in defaults) */
    const char *dir;           /* the directory it governs (absolute) */
    cf_origin origin[CF__COUNT]; /* where each key's value came from */
    char *extend;              /* absolute path of the inherited file, or NULL */
    cf_strs select;            /* empty and not set: every rule */
    bool select_set;
    cf_strs ignore;
    UT_VEC(cf_per_file) per_file_ignores;
    UT_VEC(cf_per_file) exclude; /* selectors unused */
    char *target;              /* "auto" by default */
    char *torch_version;       /* NULL: read from the project */
    char *device_priority;     /* "cuda,xpu,mps,cpu" */
    char *helper_path;         /* absolute, or NULL */
    UT_VEC(cf_rule_option) rule_options;
    cf_strs rule_dirs;         /* absolute */
    an_severity fail_on;       /* AN_SEV_INFO by default */
} cf_config;

typedef struct cf_store cf_store;

cf_store *cf_store_new(void);
void cf_store_free(cf_store *s);
/* Use this one file for every path (`--config FILE`), or none at all (`--no-config`: path NULL, isolated true). */
void cf_store_force(cf_store *s, const char *path, bool isolated);
/* Command-line values replace (select, target, torch-version, device-priority, helper-path, fail-on) or extend
 * (ignore, exclude, rule-dirs) those of every configuration. Call before the first lookup. */
void cf_store_override(cf_store *s, cf_key key, const char *value);
/* The configuration that governs path (a file or a directory): the closest .xpuify.yml in its directory or above.
 * NULL on a configuration error (appended to err as "file:line:col: message" lines). */
const cf_config *cf_store_for_path(cf_store *s, const char *path, ut_buf *err);
/* The same for a path known to be a file (the walk's): no stat of the path itself. */
const cf_config *cf_store_for_file(cf_store *s, const char *path, ut_buf *err);
/* Every configuration loaded so far (for loading their rule directories). */
size_t cf_store_count(const cf_store *s);
const cf_config *cf_store_at(const cf_store *s, size_t i);

/* The rules a configuration enables (by rule index). false: a selector names no rule (reported into err). */
bool cf_config_enabled(const cf_config *c, const an_catalog *cat, bool *enabled, ut_buf *err);
/* Applies per-file-ignores matching path to enabled. */
void cf_config_file_enabled(const cf_config *c, const an_catalog *cat, const char *path, bool *enabled);
/* The severity of rule r's findings under c. */
an_severity cf_config_severity(const cf_config *c, const an_rule *r);
/* true when path (file or directory) matches an exclude pattern of c. */
bool cf_config_excludes(const cf_config *c, const char *path, bool is_dir);

/* Glob matching used for exclude and per-file-ignores: `*`, `?`, `[..]` within a path component, `**` across
 * components; a pattern without `/` matches any trailing part of the path; a trailing `/` matches everything
 * below a directory. rel: path relative to the pattern's directory. */
bool cf_glob_match(const char *pattern, const char *rel);

/* Prints the effective configuration, each value with its origin: YAML-like text, or JSON. */
void cf_config_print(const cf_config *c, bool json, FILE *fp);
const char *cf_key_name(cf_key k);
const char *cf_origin_str(const cf_origin *o, char *buf, size_t sz);
#endif
