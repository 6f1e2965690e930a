/* an_engine: analyzes a list of files in parallel (threads = cores): read once, prefilter, dispatch to the
 * language front end, collect per-file results in the input order. */
#ifndef AN_ENGINE_H
#define AN_ENGINE_H
#include "analyzer/c/an_c.h"
#include "analyzer/core/an_diag.h"
#include "analyzer/core/an_rule.h"
#include "analyzer/core/an_suppress.h"
#include "analyzer/core/an_walk.h"

typedef struct {
    size_t max_file_size;
    int threads;          /* 0 = number of cores */
    const bool *enabled;  /* by rule index; NULL = all */
    const bool *const *file_enabled; /* per file (parallel to the file list), overriding `enabled`; NULL: none */
    bool keep_sources;    /* keep the text of every file, not only of files with findings */
    bool whole_files;     /* parse whole files instead of the regions that can hold a finding */
    an_fix_options fix;   /* which fixes to compute (target NONE: none) */
    /* per-file adjustment of `fix` (the compat helper's import differs by file); buf holds its strings */
    void (*fix_for_file)(void *ctx, const char *path, an_fix_options *fix, char *buf, size_t bufsz);
    void *fix_ctx;
    /* called from the workers after each file (done counts files finished); NULL: none */
    void (*progress)(void *ctx, size_t done, size_t total);
    void *progress_ctx;
    an_c_options c;       /* how C/C++/CUDA files are parsed (fast by default) */
    struct an_cache *cache; /* results cache (an_cache.h), or NULL */
} an_options;

typedef struct {
    const an_file *file;
    an_load_status status;
    char *error;          /* why the file was skipped (NULL when read) */
    bool parsed;          /* passed the prefilter and went through a front end */
    uint32_t parsed_bytes; /* how much of it the front end parsed (Python: the selected regions); 0 from the cache */
    an_source src;        /* kept when the file has findings or keep_sources */
    an_diag_list diags;
} an_file_result;

typedef struct {
    an_file_result *items;
    size_t len;
} an_results;

void an_engine_run(const an_catalog *cat, const an_file_list *files, const an_options *opt, an_results *out);
/* Runs fn(arg) on as many threads as requested (0: one per CPU of this process's affinity mask, at most one per
 * item) and waits for them; fn takes its items from arg (an atomic counter) until none is left. */
void an_engine_parallel(int requested, size_t items, void *(*fn)(void *), void *arg);
void an_results_free(an_results *r);
/* From here to an_engine_fixes_end, the files of `files` are fixed together (fix), or reported as fixed together
 * (check, report): a guard in one of them counts the safe fixes of another of them as done (an_guard), so that
 * `if torch.cuda.is_available(): sample = utils.move_to_cuda(sample)` is judged with utils.py's own fixes made. Each
 * file's fixes are those the run computes for it: enabled (or file_enabled[i]), fix adjusted by fix_for_file, Python
 * parsed by regions when regions is true. What a run that fixes another set says differs, and the results cache
 * keeps the two apart (an_deps_note_fixed). The arguments must outlive the span. */
void an_engine_fixes_begin(const an_catalog *cat, const an_file_list *files, const bool *enabled,
                           const bool *const *file_enabled, const an_fix_options *fix,
                           void (*fix_for_file)(void *ctx, const char *path, an_fix_options *fix, char *buf, size_t bufsz),
                           void *fix_ctx, bool regions);
void an_engine_fixes_end(void);
/* Analyzes text already in memory (editor buffer, fixer passes). */
void an_engine_analyze_source(const an_catalog *cat, an_lang lang, const an_source *src, const bool *enabled,
                              const an_fix_options *fix, an_diag_list *out);
/* The same, parsing Python by regions (the statements that can hold a finding, as `check` does; the findings are
 * those of the whole file) when regions is true. */
void an_engine_analyze_source_ex(const an_catalog *cat, an_lang lang, const an_source *src, const bool *enabled,
                                 const an_fix_options *fix, bool regions, an_diag_list *out);
/* Line facts and suppression directives of a file, from its front end; false when the language has none yet. */
bool an_engine_line_info(an_lang lang, const an_source *src, an_line_info *li, an_suppressions *sup);
/* The prefilter: false when no enabled rule can report anything in the text (the file need not be parsed). */
/* found: NULL, or an_catalog_literal_count entries that receive the prefilter's literal scan */
bool an_engine_may_report(const an_catalog *cat, an_lang lang, const bool *enabled, const char *text, size_t len,
                          uint8_t *found);
/* true when the text parses without syntax errors (used by the fixer to refuse a fix that breaks a file) */
bool an_engine_parses(an_lang lang, const char *path, const char *text, size_t len);
/* C/C++/CUDA: the syntax errors libclang finds in the text (see an_c_parse_errors); -1 without libclang or for
 * other languages. */
int an_engine_c_parse_errors(const an_catalog *cat, const char *path, const char *text, size_t len);
/* The same, with the lines of the syntax errors and of all errors (an_c_error_lines); the vectors may be NULL. */
int an_engine_c_error_lines(const an_catalog *cat, const char *path, const char *text, size_t len, an_c_lines *parse,
                            an_c_lines *all);
#endif
