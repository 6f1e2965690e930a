/* an_diag: the diagnostics model every consumer shares: a finding, its location, and its fix as byte-range edits. */
#ifndef AN_DIAG_H
#define AN_DIAG_H
#include "util/ut_mem.h"
#include "analyzer/core/an_source.h"
#include <stdint.h>

struct an_rule;

typedef enum { AN_SEV_ERROR = 0, AN_SEV_WARNING, AN_SEV_INFO } an_severity;
/* How much a fix can be trusted, as ruff names it. */
typedef enum { AN_FIX_NONE = 0, AN_FIX_SAFE, AN_FIX_UNSAFE } an_applicability;

typedef struct {
    uint32_t start, end; /* byte range in the original text; start == end inserts */
    char *text;          /* replacement */
} an_edit;

/* What a fix needs at the top of the file. The needs of a file's fixes together decide the insertion edits
 * (imports, the device definition) that every fix needing any of them carries. */
enum { AN_NEED_TORCH = 1, AN_NEED_DEV = 2, AN_NEED_HELPER = 4 };

typedef struct {
    char *title;
    an_applicability applicability;
    const char *min_torch; /* the torch version the rewritten code needs (static or catalog-owned), or NULL */
    unsigned needs;        /* AN_NEED_* this fix adds to the file's shared insertion edits */
    UT_VEC(an_edit) edits;
} an_fix;

struct an_entry;

/* How a finding was matched: a name reference, an imported name, a query or a built-in matcher. */
typedef enum { AN_ORIGIN_REF = 0, AN_ORIGIN_IMPORT, AN_ORIGIN_QUERY, AN_ORIGIN_BUILTIN } an_origin;

typedef struct {
    const struct an_rule *rule;
    const struct an_entry *entry; /* the table row, for qualified-name findings */
    an_origin origin;
    an_severity severity;                    /* the rule's, unless the configuration overrides it (set by the engine) */
    char *message;
    uint32_t start, end;                     /* byte range of the finding */
    uint32_t line, col, end_line, end_col;   /* 1-based; columns in code points; end exclusive */
    an_fix *fix;                             /* NULL when the finding has none */
    /* the code a design finding speaks for and leaves as it is (XPU810's CUDA backend, XPU811's CUDA branch);
     * scope_end == 0: none. Lines and columns as above, filled with them. */
    uint32_t scope_start, scope_end;
    uint32_t scope_line, scope_col, scope_end_line, scope_end_col;
} an_diag;

typedef UT_VEC(an_diag) an_diag_list;

const char *an_severity_name(an_severity s);
const char *an_applicability_name(an_applicability a);
void an_diag_list_free(an_diag_list *l);
void an_fix_free(an_fix *f);
/* Drops a finding in place: frees its message and fix and clears its rule (a list keeps it until compacted). */
void an_diag_drop(an_diag *d);
/* Fills line/col fields from the byte range. */
void an_diag_locate(an_diag *d, const an_source *src);
/* Sorts by position then code, and drops exact duplicates (same rule and range). */
void an_diag_list_sort(an_diag_list *l);
/* In a list sorted by start: the index of the first finding starting at or after pos (l->len when none does). */
size_t an_diag_list_first_from(const an_diag_list *l, uint32_t pos);
/* Which API family fixes target. */
typedef enum { AN_TARGET_NONE = 0, AN_TARGET_ACCELERATOR, AN_TARGET_COMPAT } an_target;

typedef struct {
    an_target target;           /* AN_TARGET_NONE: findings only, no fixes */
    int torch_major, torch_minor; /* accelerator: oldest torch the project supports (0.0 = newest) */
    const char *helper_module;  /* compat: module name of the device helper (default xpuify_device) */
    const char *helper_import;  /* compat: the import statement for this file (default "import <module>") */
    const char *helper_withheld; /* compat: why no import of the helper works in this file (its fixes that need
                                  * the helper are withheld, the finding says why); NULL: it imports */
    const char *project_facts;  /* what the file's analysis reads from its whole project (an_types_project_facts):
                                 * part of the results cache's key, so a change elsewhere in the project is seen */
    bool unsafe;                /* also compute unsafe fixes' import needs (they are always generated) */
    const char *c_gpu_include;  /* C: how a file includes the portable GPU layer (default "xpuify_gpu.h") */
    const char *c_ccl_include;  /* C: how a file includes the portable collectives layer (default "xpuify_ccl.h") */
    bool whole_files;           /* the fixer's passes parse whole files (--whole-files), not regions as check does */
} an_fix_options;

/* Applies edits to text; edits must be sorted and not overlap. Returns a new heap string. */
char *an_edits_apply(const char *text, size_t len, const an_edit *edits, size_t n, size_t *out_len);
/* true when version "a.b" is newer than major.minor */
bool an_version_newer(const char *v, int major, int minor);
#endif
