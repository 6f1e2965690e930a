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

/* The node index of a tree this thread reads (NULL: none); returns the one it replaces, to be given back. While an
 * index is set, an_py_field answers for the nodes of its tree from the index (the node found by its start byte, its
 * field among the children the index lists) instead of ts_node_child_by_field_id, which walks the node's children
 * and the grammar's field map on every call (~700 instructions; a file dense with findings asks ~20 times a
 * finding). The index must outlive its use: set it back before the index or its tree is freed. */
struct an_pynodes_s;
const struct an_pynodes_s *an_py_field_index(const struct an_pynodes_s *v);

#endif
