/* an_query: tree-sitter query rules: one combined query per language, the predicates xpuify adds
 * (#resolves-to?, #has-keyword?, #string-match?, ...) and running it over a tree. */
#ifndef AN_QUERY_H
#define AN_QUERY_H
#include "util/ut_buf.h"
#include "analyzer/core/an_rule.h"
#include <tree_sitter/api.h>

typedef struct an_query_set an_query_set;

/* Writes the qualified name a node (identifier or attribute chain) resolves to; false when it does not. */
typedef bool (*an_resolve_fn)(void *ctx, TSNode node, ut_buf *out);
/* Called for each match whose predicates hold; report is the node of the rule's report capture. */
typedef void (*an_match_fn)(void *ctx, const an_rule *rule, TSNode report);

void an_query_run(const an_query_set *qs, TSNode root, const char *src, an_resolve_fn resolve, void *rctx,
                  an_match_fn on_match, void *mctx);
/* The same over the matches that intersect the byte range [lo, hi). */
/* Every pattern is rooted at a statement or an expression (not at a definition, a block, the module, a wildcard or
 * an alternation): matches can then be looked for statement by statement (an_python.c). */
bool an_query_set_statement_level(const an_query_set *qs);
void an_query_run_range(const an_query_set *qs, TSNode root, uint32_t lo, uint32_t hi, const char *src,
                        an_resolve_fn resolve, void *rctx, an_match_fn on_match, void *mctx);
/* The same as an_query_run_range from node, started below node where that finds the same matches (node a block or
 * a definition, whose children outside the range need no visit). */
void an_query_run_within(const an_query_set *qs, TSNode node, uint32_t lo, uint32_t hi, const char *src,
                         an_resolve_fn resolve, void *rctx, an_match_fn on_match, void *mctx);
/* The language a tree-sitter query set is for (NULL for languages without tree-sitter). */
const TSLanguage *an_query_language(an_lang lang);
/* Text between the quotes of a Python string node (prefix and quotes removed). */
void an_py_string_content(TSNode str, const char *src, uint32_t *start, uint32_t *end);
#endif
