/* out: the output formats (text, concise, json, sarif, github). They read diagnostics and the catalog only;
 * none knows which front end produced a finding. */
#ifndef OUT_H
#define OUT_H
#include "../analyzer/an_engine.h"
#include <stdio.h>

typedef enum { OUT_TEXT, OUT_CONCISE, OUT_JSON, OUT_SARIF, OUT_GITHUB } out_format;

typedef struct {
    const an_catalog *cat;
    const an_results *res;
    const char *version;
    bool color;
    bool show_fixes; /* text: print the fix under the finding */
} out_report;

bool out_format_parse(const char *s, out_format *f);
const char *out_format_names(void);
void out_write(out_format f, const out_report *r, FILE *fp);

void out_text(const out_report *r, FILE *fp, bool concise);
/* the findings alone, without the closing summary line */
void out_text_findings(const out_report *r, FILE *fp, bool concise);
void out_json(const out_report *r, FILE *fp);
void out_sarif(const out_report *r, FILE *fp);
void out_github(const out_report *r, FILE *fp);

/* Shared by json and sarif: the JSON object describing a fix (NULL when none). */
struct cJSON;
struct cJSON *out_json_fix(const an_diag *d, const an_source *src);
size_t out_count(const an_results *r);
/* s with every byte that is not part of valid UTF-8 replaced by U+FFFD (file names need not be UTF-8; JSON must
 * be), as a heap string */
char *out_utf8_lossy(const char *s);
#endif
