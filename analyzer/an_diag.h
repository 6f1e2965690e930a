/* an_diag: the diagnostics model every consumer shares: a finding, its location, and its fix as byte-range edits. */
#ifndef AN_DIAG_H
#define AN_DIAG_H
#include "../util/ut_mem.h"
#include "an_source.h"
#include <stdint.h>

struct an_rule;

typedef enum { AN_SEV_ERROR = 0, AN_SEV_WARNING, AN_SEV_INFO } an_severity;
/* How much a fix can be trusted, as ruff names it. */
typedef enum { AN_FIX_NONE = 0, AN_FIX_SAFE, AN_FIX_UNSAFE } an_applicability;

typedef struct {
    uint32_t start, end; /* byte range in the original text; start == end inserts */
    char *text;          /* replacement */
} an_edit;

typedef struct {
    char *title;
    an_applicability applicability;
    UT_VEC(an_edit) edits;
} an_fix;

typedef struct {
    const struct an_rule *rule;
    char *message;
    uint32_t start, end;                     /* byte range of the finding */
    uint32_t line, col, end_line, end_col;   /* 1-based; columns in code points; end exclusive */
    an_fix *fix;                             /* NULL when the finding has none */
} an_diag;

typedef UT_VEC(an_diag) an_diag_list;

const char *an_severity_name(an_severity s);
const char *an_applicability_name(an_applicability a);
void an_diag_list_free(an_diag_list *l);
void an_fix_free(an_fix *f);
/* Fills line/col fields from the byte range. */
void an_diag_locate(an_diag *d, const an_source *src);
/* Sorts by position then code, and drops exact duplicates (same rule and range). */
void an_diag_list_sort(an_diag_list *l);
#endif
