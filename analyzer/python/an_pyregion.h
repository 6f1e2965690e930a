/* an_pyregion: picks the parts of a Python file that can hold a finding, so the front end parses only those
 * (tree-sitter included ranges): every top-level statement holding a locality match or an import that binds a name
 * some rule resolves (plus the file's opening, as far as the fixer's header analysis reads it), and inside a
 * def/class only its header plus the members that do, down through nested definitions (class -> method ->
 * statement). A light line scanner (strings, brackets, continuations, comments) finds statement boundaries;
 * anything it is unsure of means "parse the whole file" (or, inside one definition, "take it whole"). */
#ifndef AN_PYREGION_H
#define AN_PYREGION_H
#include "analyzer/core/an_rule.h"
#include "analyzer/core/an_source.h"
#include <tree_sitter/api.h>

typedef struct {
    uint32_t start, end;
} an_span;

typedef UT_VEC(an_span) an_span_vec;

/* The tree-sitter point (row, byte column) of a byte offset of src, for the included ranges a parse of spans takes. */
TSPoint an_py_point_at(const an_source *src, uint32_t byte);

/* Sorts the spans and joins those that overlap or touch. */
void an_spans_merge(an_span_vec *v);
/* [a, b) meets one of the sorted, disjoint spans (a binary search). */
bool an_spans_meet(const an_span_vec *v, uint32_t a, uint32_t b);

/* More spans than this are parsed as the whole file (see an_pyregion_select) */
#define AN_PYREGION_MAX_SPANS 1024

typedef struct {
    bool whole;             /* parse the whole file */
    bool nothing;           /* every locality match lies in a comment or a docstring: nothing can be reported */
    an_span_vec spans;      /* sorted, disjoint, each starting at a line start */
    an_span_vec comments;   /* comments that contain "xpuify:" (suppression directives), anywhere in the file */
    uint32_t selected;      /* bytes in spans */
    UT_VEC(uint32_t) hits;  /* where the locality matches outside comments and docstrings start (sorted) */
    bool hits_known;        /* hits is complete (the scanner was sure of the file's statements) */
} an_pyregions;

/* found: the prefilter's literal scan of src (an_catalog_prefilter), or NULL. helper: the compat device helper's
 * module name, or NULL: an import naming it is parsed (the fixer must see that the file already imports it). */
void an_pyregion_select(const an_catalog *cat, const an_source *src, const uint8_t *found, const char *helper,
                        an_pyregions *out);
void an_pyregions_free(an_pyregions *r);
/* A top-level statement of a file: from a line start (the first from src->body) to the start of the next (the last
 * to the end of the file), a decorated definition and an if/try with its clauses as one. A class whose members the
 * scanner is sure of has them too: its header is [span.start, members[mfirst].start). */
typedef struct {
    an_span span;
    size_t mfirst, mcount; /* a class: its members in an_pyunits.members (mcount 0: none known) */
    /* a function or class definition whose every `import` word is in one of its own import statements, none in an
     * except clause or sharing its line with another statement (`;`): those statements, each from its keyword to
     * the end of its logical line, in an_pyunits.imports (nimports 0 and imports_known false otherwise) */
    bool imports_known;
    size_t ifirst, nimports;
} an_pyunit;

typedef struct {
    UT_VEC(an_pyunit) units;
    an_span_vec members;
    an_span_vec imports;
} an_pyunits;

/* The top-level statements of src, found by the same line scanner; false when it is unsure of them (out is then
 * empty). */
bool an_pyregion_units(const an_source *src, an_pyunits *out);
void an_pyunits_free(an_pyunits *u);
#endif
