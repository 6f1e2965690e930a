/* out_dirs: the report's per-directory roll-up: the findings of many directories summed into at most a given number
 * of rows (a directory and everything under it, a directory's own files, or "other"), split where the work is, so
 * that a chart of the rows always sums to the total. */
#ifndef OUT_DIRS_H
#define OUT_DIRS_H
#include <stdbool.h>
#include <stddef.h>

/* How a finding can be fixed: by `xpuify fix`, by `xpuify fix --unsafe-fixes`, or only by hand. */
enum { OUT_FIX_SAFE = 0, OUT_FIX_UNSAFE, OUT_FIX_HUMAN, OUT_FIX_CLASSES };

typedef struct {
    char *dir; /* relative to the project root, no trailing slash; "" for the root */
    size_t n[OUT_FIX_CLASSES];
} out_dir_leaf;

typedef struct {
    char *prefix; /* a directory ("" for the root) */
    bool exact;   /* only the files directly in prefix; else prefix and everything under it */
} out_dir_match;

typedef struct {
    char *label;           /* "src/ops/", "src/ (its own files)", "(top-level files)", "other (12 directories)" */
    out_dir_match *match;  /* what the row covers (several for "other") */
    size_t nmatch;
    bool other;
    size_t count, n[OUT_FIX_CLASSES];
} out_dir_row;

typedef struct {
    out_dir_row *items;
    size_t len;
} out_dir_rows;

/* Rolls LEAVES (any order; a directory at most once) up into at most LIMIT rows (LIMIT >= 2), most findings first,
 * "other" last. Starts from the top-level directories and splits the row with the most findings into its
 * subdirectories (and its own files) while the rows fit, stopping at the first that does not (a smaller directory is
 * never split while a larger one stays whole); a directory with one subdirectory and no files of its own is shown as
 * that subdirectory. */
void out_dirs_rollup(const out_dir_leaf *leaves, size_t n, size_t limit, out_dir_rows *out);
/* Whether a finding in directory DIR (as in out_dir_leaf) belongs to ROW. */
bool out_dir_row_covers(const out_dir_row *row, const char *dir);
void out_dir_rows_free(out_dir_rows *rows);
#endif
