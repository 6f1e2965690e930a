/* out: the output formats (text, concise, json, sarif, github, gitlab, junit). They read diagnostics and the catalog only;
 * none knows which front end produced a finding. */
#ifndef OUT_H
#define OUT_H
#include "analyzer/core/an_engine.h"
#include <stdio.h>

typedef enum { OUT_TEXT, OUT_CONCISE, OUT_JSON, OUT_SARIF, OUT_GITHUB, OUT_GITLAB, OUT_JUNIT } out_format;

typedef struct {
    const an_catalog *cat;
    const an_results *res;
    const char *version;
    bool color;
    bool show_fixes; /* text: print the fix under the finding */
    char **fingerprints; /* one per finding, in order (out_fingerprints); NULL: computed where needed */
    const an_skip_list *skipped; /* directories the walk did not enter (NULL: none) */
    bool failed;         /* the run had an error (a named path missing, a configuration error, a failed write) */
    /* compat target: per result file, the helper module that its fixes import and that does not exist yet (NULL:
     * none), and the helper's text; SARIF fixes then also create it. NULL array: no file needs one. */
    const char *const *helper_paths;
    const char *helper_text;
    const char *srcroot; /* SARIF: the directory relative paths start from (absolute, ends in '/'), or NULL */
} out_report;

/* What a run did not check: files it could not read or analyze (results whose status is not AN_LOAD_OK) and the
 * directories the walk did not enter. Every format reports them; none says "passed" when there are any. */
typedef struct {
    const char *path, *why;
    bool error; /* named on the command line (an error) rather than found by walking (a warning) */
} out_skip;
/* The list (heap, free with ut_free; NULL when empty) and its length. */
size_t out_skips(const out_report *r, out_skip **out);

/* The fingerprint of finding j of file i (NULL when the report has none). */
const char *out_report_fingerprint(const out_report *r, size_t i, size_t j);

bool out_format_parse(const char *s, out_format *f);
const char *out_format_names(void);
void out_write(out_format f, const out_report *r, FILE *fp);

void out_text(const out_report *r, FILE *fp, bool concise);
/* the findings alone, without the closing summary line */
void out_text_findings(const out_report *r, FILE *fp, bool concise);
void out_json(const out_report *r, FILE *fp);
void out_sarif(const out_report *r, FILE *fp);
void out_github(const out_report *r, FILE *fp);
void out_gitlab(const out_report *r, FILE *fp);
void out_junit(const out_report *r, FILE *fp);
/* --statistics: one line (or JSON object) per rule: count, code, name, how many a fix would change */
void out_statistics(const out_report *r, bool json, FILE *fp);

/* The HTML migration report (out_html.c). */
typedef struct {
    const char *path;
    const char *diff; /* unified diff of what `fix` changes */
    size_t fixes;
} out_html_diff;

struct cJSON;
typedef struct {
    const out_report *rep;
    const char *title;
    const char *target;          /* the fix target and why */
    const out_html_diff *diffs;
    size_t ndiffs;
    const char *const *kernels;  /* C/C++/CUDA sources found */
    size_t nkernels;
    const struct cJSON *verify;  /* a validated `xpuify verify --format json` document, or NULL */
} out_html_input;

void out_html(const out_html_input *in, FILE *fp);
/* Checks a verify document's shape; false with a message (naming what is wrong) in *why (heap). */
bool out_verify_valid(const struct cJSON *v, char **why);

struct cJSON;
/* An unsigned integer member, printed as cJSON prints a whole number but without its printf/sscanf round trip
 * (which was most of the time spent writing a large report). The item is raw JSON: for printing only. */
void out_json_add_uint(struct cJSON *o, const char *name, uint32_t v);
size_t out_count(const an_results *r);
/* s with every byte that is not part of valid UTF-8 replaced by U+FFFD (file names need not be UTF-8; JSON must
 * be), as a heap string */
char *out_utf8_lossy(const char *s);
#endif
