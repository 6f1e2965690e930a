/* an_walk: turns the paths on the command line into the sorted list of files to analyze: directory walk,
 * .gitignore (libgit2), default and --exclude globs, language by file name. */
#ifndef AN_WALK_H
#define AN_WALK_H
#include "util/ut_buf.h"
#include "analyzer/core/an_rule.h"

typedef struct {
    char *path;
    an_lang lang;
    bool named; /* given on the command line (not found by walking) */
    an_stamp stamp; /* what stat said during the walk (for the results cache) */
} an_file;

typedef UT_VEC(an_file) an_file_list;

/* A path the walk found and did not enter: reported in every output format, never dropped silently. */
typedef struct {
    char *path;
    char *why;
} an_skip;
typedef UT_VEC(an_skip) an_skip_list;
void an_skip_list_free(an_skip_list *l);

/* Directories nested deeper than this below a named path are not walked (and are reported as skipped). */
#define AN_WALK_MAX_DEPTH 256

typedef struct {
    bool no_ignore;               /* do not read .gitignore */
    UT_VEC(char *) excludes;      /* extra globs */
    bool langs[AN_LANG__COUNT];   /* languages to collect */
    /* extra exclusion (the configuration's): true skips the file or directory; NULL: none */
    bool (*skip)(void *ctx, const char *path, bool dir);
    void *skip_ctx;
    bool force_exclude;           /* excludes apply to paths named on the command line too */
    an_skip_list *skipped;        /* receives the directories not entered (too deep); NULL: not recorded */
} an_walk_options;

/* Returns the number of named paths that do not exist (each reported into errs as "path: reason"). */
int an_walk(const char *const *paths, size_t npaths, const an_walk_options *opt, an_file_list *out, ut_buf *errs);
void an_file_list_free(an_file_list *l);
/* Language of a path by its name; false when xpuify does not read such files. */
bool an_lang_for_path(const char *path, an_lang *lang);
/* fnmatch-style glob test against the path and each of its trailing components (like ruff's exclude). */
bool an_path_matches_glob(const char *path, const char *glob);
#endif
