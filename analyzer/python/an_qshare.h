/* an_qshare: query patterns that differ only in their capture names and predicates, written once.
 *
 * tree-sitter 0.20.7 keeps a state for every pattern that can start at a node (34 of the catalog's patterns start at
 * every `call`) and evaluates no predicate itself, so two rules whose patterns have the same shape
 * (`(call function: (_) @f arguments: (argument_list) @args)` with different #resolves-to? lists) cost two states
 * and two matches where one would do. an_qshare_build splits each rule's query text into its top-level patterns,
 * writes each pattern's shape with its captures renamed in order of appearance (@c0, @c1, ...) and its predicates
 * taken out, and gives one combined query text in which each shape appears once, as a group holding the shape and,
 * for each pattern of that shape (its owner), a marker predicate `(#an-owner! "K")` followed by that owner's own
 * predicates with the same renaming. Predicate strings are copied as written, so tree-sitter still reads them.
 *
 * It answers false (the caller then compiles the rules' texts as they are) for anything it does not fully
 * understand: an unbalanced text, a top-level form other than a parenthesized node or an alternation with
 * captures or quantifiers after it, a predicate outside a pattern, a predicate naming a capture its pattern lacks,
 * or a text that already uses the marker. */
#ifndef AN_QSHARE_H
#define AN_QSHARE_H
#include "util/ut_buf.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AN_QSHARE_MARKER "an-owner!"

typedef struct {
    uint32_t rule;   /* index into the texts given */
    uint32_t shape;  /* the pattern index of its shape in the combined text */
    char **names;    /* its capture names in order of appearance: names[k] is @c<k> in the combined text */
    uint32_t nnames;
} an_qshare_owner;

typedef struct {
    ut_buf text;            /* the combined query text */
    an_qshare_owner *owners; /* in the order of the texts and of the patterns in each; owner K's marker says "K" */
    uint32_t nowners;
    uint32_t nshapes;
} an_qshare;

bool an_qshare_build(const char *const *texts, size_t ntexts, an_qshare *out);
/* The canonical name (c<k>) of capture name in owner o, or -1. */
int an_qshare_capture(const an_qshare_owner *o, const char *name, size_t len);
void an_qshare_free(an_qshare *q);

#endif
