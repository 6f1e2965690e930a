/* an_pyfield: the child of a Python syntax node in a named field, with the field's id found in a table made once.
 * tree-sitter 0.20's ts_node_child_by_field_name compares the name with every field name of the language (strlen
 * and strncmp over ~30 names) on each call, which the fixer, the context and flow facts and the qualified names of
 * the queries make for every finding of a file (a few percent of checking one dense with findings). */
#ifndef AN_PYFIELD_H
#define AN_PYFIELD_H
#include <stdint.h>
#include <tree_sitter/api.h>

/* ts_node_child_by_field_name(n, name, len), the same answer (a null node for a name the language lacks) */
TSNode an_py_field(TSNode n, const char *name, uint32_t len);

#endif
