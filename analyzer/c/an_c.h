/* an_c: the C/C++/CUDA front end (libclang). A file is parsed for real, in one of two modes:
 * - fast (default): no toolkit needed; includes are not followed; a declarations header generated from the API
 *   tables is force-included (an unsaved file), errors are tolerated (KeepGoing);
 * - precise: flags from compile_commands.json (-p DIR) and the real CUDA headers (--cuda-path, CUDA_PATH,
 *   /usr/local/cuda) with a shim that lets clang 14 read CUDA 12/13 headers.
 * Findings come from the file's own tokens (so macro arguments, macro bodies, inactive #if branches and broken
 * regions are all covered), checked against the AST where it has something to say: a name the file declares
 * itself, or that resolves to a declaration of this file, is the user's own and not an API use. */
#ifndef AN_C_H
#define AN_C_H
#include "analyzer/core/an_diag.h"
#include "analyzer/core/an_rule.h"
#include "analyzer/core/an_source.h"

typedef enum { AN_C_FAST = 0, AN_C_PRECISE } an_c_mode;

typedef struct {
    an_c_mode mode;
    const char *compile_db; /* directory holding compile_commands.json (precise mode), or NULL */
    const char *cuda_path;  /* CUDA toolkit root, or NULL: $CUDA_PATH, then /usr/local/cuda */
    bool launch_calls;      /* fast mode: `k<<<g, b>>>(...)` parses as a call (the kernel translator's parse) */
} an_c_options;

typedef struct an_c an_c; /* one per thread: owns a CXIndex, created on the first file that needs it */

an_c *an_c_new(const an_c_options *opt);
void an_c_free(an_c *c);
/* enabled: indexed by rule->index, NULL = all. Returns false, with a heap reason in *why (when why is not NULL),
 * when the file could not be analyzed at all (libclang missing, or it refused the file). */
bool an_c_analyze(an_c *c, const an_catalog *cat, const an_source *src, const bool *enabled, an_diag_list *out,
                  char **why);
/* How many syntax errors (clang's "Parse Issue" diagnostics of severity error or worse) libclang finds in the file
 * itself; -1 when libclang cannot be used. The fixer compares the count before and after its edits: semantic
 * errors (a name the fast mode does not declare) do not count, broken syntax does. */
int an_c_parse_errors(an_c *c, const an_catalog *cat, const an_source *src);
/* The same count, and (when given) the lines of those syntax errors and of every error in the file itself
 * (semantic ones too), in libclang's order. */
typedef UT_VEC(int) an_c_lines;
int an_c_error_lines(an_c *c, const an_catalog *cat, const an_source *src, an_c_lines *parse, an_c_lines *all);
/* The file parsed for the kernel translator (an_ckernel.c): its translation unit with a detailed preprocessing
 * record, or NULL; *file gets the main file. The caller disposes it with an_c_tu_free. */
void *an_c_parse_tu(an_c *c, const an_catalog *cat, const an_source *src, void **file);
void an_c_tu_free(void *tu);
/* s[0..n) is a C identifier (letters, digits, `_`; not starting with a digit). */
bool an_c_identifier(const char *s, size_t n);
/* The fast-mode declarations header for a file (what an_c_analyze force-includes); for tests and --debug. */
char *an_c_fast_header(const an_catalog *cat, const char *path, const char *text, size_t len);
#endif
