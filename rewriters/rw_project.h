/* rw_project: fixing the files of a project one by one: each file to its fixpoint (rw_fixer), the compat
 * helper written once per location when a fixed file imports it, then an atomic write, or a unified diff
 * instead of writing. Shared by `xpuify fix` and `xpuify verify` (which fixes its copy of the project). */
#ifndef RW_PROJECT_H
#define RW_PROJECT_H
#include "analyzer/core/an_engine.h"
#include "util/ut_buf.h"
#include "rewriters/rw_fixer.h"

typedef struct {
    /* set by the caller */
    const an_catalog *cat;
    const bool *enabled;
    an_fix_options fix; /* the chosen target */
    /* per-file adjustment of `fix` (the helper import differs by file); the an_options.fix_for_file shape */
    void (*fix_for_file)(void *ctx, const char *path, an_fix_options *fix, char *buf, size_t bufsz);
    void *fix_ctx;
    const char *helper_module, *helper_path, *priority;
    /* called with a file's fixed text before it is written (C files: the portable layers it includes); false:
     * the file is not written */
    bool (*on_fixed)(void *ctx, const char *path, an_lang lang, const an_fix_options *fix, const char *text,
                     ut_buf *patch);
    void *on_fixed_ctx;
    bool unsafe, diff, quiet;
    /* results */
    ut_buf patch;         /* diff mode: the unified diff of every file (and of a new helper) */
    size_t fixed, files_changed;
    bool errors;          /* a file could not be fixed or written (reported on stderr) */
    UT_VEC(char *) helpers_done;
} rw_project;

void rw_project_init(rw_project *p);
void rw_project_free(rw_project *p);
/* Fixes one file whose text is loaded in *src. When the fix was written, *src holds the fixed text after. */
void rw_project_fix_file(rw_project *p, const an_file *f, an_source *src);

/* The same in two halves, for fixing files on several threads: rw_project_compute is thread-safe (the file's fix
 * options and its fixpoint; nothing written, nothing printed), rw_project_apply runs in file order (errors,
 * helper placement, the on_fixed hook, then the diff or the write). */
typedef struct {
    an_fix_options fix; /* this file's options (its strings live in buf) */
    char buf[1024];
    rw_file_fix ff;
    bool ran;           /* the file passed the prefilter and went to its fixpoint */
} rw_fixed_file;
void rw_project_compute(const rw_project *p, const an_file *f, const an_source *src, rw_fixed_file *out);
/* true when the fixed text was written (then *src holds it) */
bool rw_project_apply(rw_project *p, const an_file *f, an_source *src, rw_fixed_file *ff);
void rw_fixed_file_free(rw_fixed_file *ff);
#endif
