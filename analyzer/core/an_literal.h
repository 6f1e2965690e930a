/* an_literal: required literals of trigger patterns, and a one-pass scanner for all of them.
 *
 * A pattern's *cover* is a set of literals one of which every match of the pattern contains (`\bcuda\b` -> {cuda},
 * `accelerator\s*=\s*.(?:gpu|cuda)` -> {accelerator}, `(?:torch\.cuda|pynvml)` -> {torch.cuda, pynvml}). The
 * prefilter scans a file once for every literal of every cover and runs a pattern's PCRE2 code only when one of its
 * literals was seen: what ripgrep does with its literal prefilter, so most files are rejected at memory speed. */
#ifndef AN_LITERAL_H
#define AN_LITERAL_H
#include "util/ut_mem.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct an_lits an_lits;
typedef UT_VEC(uint32_t) an_u32_vec;

an_lits *an_lits_new(void);
void an_lits_free(an_lits *l);
/* Appends the ids of re's cover to ids (adding its literals to the set). False, with ids unchanged, when the
 * pattern has no cover this parser can prove (the pattern must then always be run). */
bool an_lits_cover(an_lits *l, const char *re, an_u32_vec *ids);
size_t an_lits_count(const an_lits *l);
/* found[id] = 1 for every literal that occurs in text (found has an_lits_count entries; it is cleared first). */
void an_lits_scan(const an_lits *l, const char *text, size_t len, uint8_t *found);
/* Any of ids found (an empty list: false). */
bool an_lits_any(const uint8_t *found, const uint32_t *ids, size_t n);
#endif
