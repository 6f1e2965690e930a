/* an_pynest: how deep a Python file's brackets nest, found by a byte scan before any parse: tree-sitter 0.20.7
 * frees a subtree twice on tens of thousands of unclosed brackets (an abort in check, fix and the language server),
 * before any depth limit of the front end applies, so a file nested deeper than AN_PY_MAX_NESTING is never parsed. */
#ifndef AN_PYNEST_H
#define AN_PYNEST_H
#include "analyzer/core/an_source.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CPython refuses more than 200 nested brackets ("too many nested parentheses"): five times that is no real code */
#define AN_PY_MAX_NESTING 1000

/* True when the brackets of text nest deeper than limit, with *at the offset of the first bracket past it.
 * Brackets in comments and in strings (f-strings excepted: their replacement fields are code) are not counted; an
 * unterminated string counts as code (a parser's error recovery may read it so); closers without an opener are
 * ignored. */
bool an_py_nesting_over(const char *text, size_t len, uint32_t limit, size_t *at);
/* The reason a file is not analyzed when an_py_nesting_over holds for src (malloc'd), or NULL when it does not. */
char *an_py_nesting_why(const an_source *src);

#endif
