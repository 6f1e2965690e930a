/* rw_fixer: fixes one file to a fixpoint: analyze, apply a pass of non-overlapping fixes, re-analyze, up to a
 * bound. A file that does not converge, or whose fix introduces a syntax error, is left untouched and the rules
 * involved are named. */
#ifndef RW_FIXER_H
#define RW_FIXER_H
#include "analyzer/core/an_engine.h"

#define RW_MAX_PASSES 20

typedef struct {
    char *text;   /* fixed text, NULL when nothing changed or on error */
    size_t len;
    size_t fixed; /* fixes applied over all passes */
    int passes;
    char *error;  /* why the file was left untouched (heap), or NULL */
    UT_VEC(const an_rule *) rules; /* the rule of each applied fix */
} rw_file_fix;

void rw_fix_source(const an_catalog *cat, an_lang lang, const an_source *src, const bool *enabled,
                   const an_fix_options *fix, bool unsafe, rw_file_fix *out);
void rw_file_fix_free(rw_file_fix *f);
#endif
