/* ut_suggest: "did you mean" for a mistyped verb, option or rule code: the closest known word by edit distance. */
#ifndef UT_SUGGEST_H
#define UT_SUGGEST_H
#include <stddef.h>

/* Optimal-string-alignment distance (insertions, deletions, substitutions, adjacent transpositions), ignoring
 * ASCII case and counting the look-alikes 0/O and 1/l as equal. */
size_t ut_edit_distance(const char *a, const char *b);
/* The candidate closest to word, when close enough to be a typo of it (at most a third of its length, at least
 * one edit); NULL when none is or two are equally close. */
const char *ut_suggest(const char *word, const char *const *cands, size_t n);
/* For an unknown option `arg` (`--formt`, `--formt=json`): the closest long option named in the help texts (NULL
 * ends the list), written into buf; NULL when none is close. */
const char *ut_suggest_option(const char *arg, char *buf, size_t sz, const char *help, ...);
#endif
