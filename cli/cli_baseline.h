/* cli_baseline: `--write-baseline FILE` records every current finding by fingerprint (see out_fingerprint.h);
 * `--baseline FILE` hides the findings recorded there, so only new ones are reported and fail the run, and names
 * the entries that no longer match anything (fixed, or their line changed) so the file can be pruned. */
#ifndef CLI_BASELINE_H
#define CLI_BASELINE_H
#include "analyzer/core/an_engine.h"

typedef struct {
    char *fingerprint, *code, *path, *source;
    unsigned line;
    bool used;
} cli_baseline_entry;

typedef struct {
    UT_VEC(cli_baseline_entry) entries; /* sorted by fingerprint */
} cli_baseline;

/* Writes the findings of res (fps: their fingerprints, in order). false: cannot write (message in err). */
bool cli_baseline_write(const char *file, const an_results *res, char **fps, ut_buf *err);
/* false: unreadable or malformed (message naming the file in err). */
bool cli_baseline_load(const char *file, cli_baseline *b, ut_buf *err);
/* Drops the findings whose fingerprint is in the baseline (each entry hides one finding); returns how many. */
size_t cli_baseline_filter(cli_baseline *b, an_results *res, char **fps);
void cli_baseline_free(cli_baseline *b);
#endif
