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
/* The same, and where re is one alternative, also every other set of literals a match must hold one of (a trigger
 * `\bclass\s+\w*(?:CUDA|cuda)` needs `class` and one of `CUDA`, `cuda`): appended to also as the set's size
 * followed by its ids, for an_lits_all. Only sets of literals of 3 bytes or more are kept. */
bool an_lits_cover_all(an_lits *l, const char *re, an_u32_vec *ids, an_u32_vec *also);
/* Every set of also (as an_lits_cover_all writes it, n entries) has a literal in found. */
bool an_lits_all(const uint8_t *found, const uint32_t *also, size_t n);
size_t an_lits_count(const an_lits *l);
/* found[id] = 1 for every literal that occurs in text (found has an_lits_count entries; it is cleared first). */
void an_lits_scan(const an_lits *l, const char *text, size_t len, uint8_t *found);
/* Any of ids found (an empty list: false). */
bool an_lits_any(const uint8_t *found, const uint32_t *ids, size_t n);

/* A pattern that is literals only, each perhaps between boundaries: `xpu`, `\bcuda\b`, `torch\.backends\.`,
 * `\bxpu\b|torch\.accelerator`, `(?i)(?<![a-z0-9])(?:npu|mps|hip)(?![a-z0-9])`. Its matches are found with memmem
 * or a loop over the text where PCRE2 (JIT or not) steps through it one candidate byte at a time; they are PCRE2's
 * (compiled with PCRE2_UTF, without PCRE2_UCP: `\b` is between an ASCII word byte, [A-Za-z0-9_], and anything else
 * or either end of the subject). A caseless pattern needs an_plain_caseless_safe texts: PCRE2 also matches the long
 * s and the Kelvin sign to `s` and `k` there. */
typedef struct {
    char *lit;
    size_t n;
    uint8_t before, after; /* AN_PLAIN_* that must hold before, after the literal */
    uint16_t next;         /* 1 + the next alternative with the same first byte (caseless: folded), 0: none */
} an_plain_alt;
enum { AN_PLAIN_ANY, AN_PLAIN_WB /* \b */, AN_PLAIN_NOT_ALNUM /* (?<![a-z0-9]), (?![a-z0-9]) */ };
typedef struct {
    an_plain_alt *alts; /* in the pattern's order; NULL: the pattern is not such literals */
    size_t nalt;
    bool nocase;       /* (?i) before everything */
    uint8_t before;     /* the boundary every alternative has before it (AN_PLAIN_ANY when they differ) */
    uint16_t head[256]; /* by first byte (caseless: ASCII lower case): 1 + the first such alternative, 0: none */
    uint64_t *pairs;    /* 65536 bits by the first two bytes (caseless: lower case) an alternative can start with;
                         * NULL for one literal of one case (found with memmem) */
    unsigned char cls[256]; /* by byte: 1 a letter or digit as (?<![a-z0-9]) reads it, 2 the first byte of some
                             * alternative (both after folding when caseless) */
} an_plain;
/* re's literals into out (out->alts NULL when re is anything else, or holds bytes above 0x7f). */
void an_plain_parse(const char *re, an_plain *out);
void an_plain_free(an_plain *p);
/* The first match in the subject text[0, len) that starts at from or later, as pcre2_match with start offset from
 * finds it (a boundary reads the byte before from): its start, with its end in *end; or -1. */
long an_plain_find(const an_plain *p, const char *text, size_t len, size_t from, size_t *end);
/* text holds none of the non-ASCII letters that caseless PCRE2 matches to an ASCII one (U+017F, U+212A; U+0130 and
 * U+0131 to be safe). */
bool an_plain_caseless_safe(const char *text, size_t len);
#endif
