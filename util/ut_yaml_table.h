/* ut_yaml_table: YAML documents parsed at build time (tools/embed_yaml.c, with libyaml itself) and kept as tables
 * in the binary, rebuilt at run time into the yaml_document_t libyaml would have loaded: the same nodes, values,
 * styles, tags and marks, without parsing. The built-in rule catalog (744 KB of YAML, ~42,000 nodes) is loaded on
 * every run: libyaml's parse of it cost 150 M instructions, more than half of checking a two-line file. */
#ifndef UT_YAML_TABLE_H
#define UT_YAML_TABLE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

/* One node. Scalar: [a, a + b) of the pool (NUL after it). Sequence: b items from items[a]. Mapping: b pairs from
 * pairs[a]. tag: an offset in the pool (NUL-terminated). Marks: index, line, column, as libyaml gives them. */
typedef struct {
    uint8_t type;  /* yaml_node_type_t */
    uint8_t style; /* the scalar, sequence or mapping style */
    uint32_t tag, a, b;
    uint32_t start[3], end[3];
} ut_yaml_tnode;

/* One document: count nodes from nodes[first] (node id k is nodes[first + k - 1]), its marks and implicit flags.
 * Node ids inside items and pairs are the document's own (1-based), as in libyaml. */
typedef struct {
    const char *path;
    uint32_t first, count;
    uint32_t start[3], end[3];
    uint8_t start_implicit, end_implicit;
} ut_yaml_tdoc;

typedef struct {
    const char *pool;
    const ut_yaml_tnode *nodes;
    yaml_node_item_t *items; /* yaml_node_t points at them; never written */
    yaml_node_pair_t *pairs;
    const ut_yaml_tdoc *docs;
    size_t ndocs;
} ut_yaml_table;

/* The document docs[i] of t, as yaml_parser_load gives it; false when t has no document i. Free with
 * ut_yaml_table_doc_free (not yaml_document_delete: the values and lists are the table's). */
bool ut_yaml_table_doc(const ut_yaml_table *t, size_t i, yaml_document_t *doc);
void ut_yaml_table_doc_free(yaml_document_t *doc);
#endif
