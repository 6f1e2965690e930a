/* an_pynodes: every node of a tree-sitter tree in the order a tree cursor visits them (pre-order, the nodes a
 * cursor shows: hidden repetition and supertype nodes are stepped through, not listed), each with its depth, its
 * field in the parent and the index just past its subtree. Built once per tree by one cursor walk and read by
 * each collector of the front end (the walk of an_python, scope, context facts, dispatches, flow bindings) in
 * place of a cursor walk of its own: the same nodes in the same order, and a subtree is skipped by a jump. A cursor
 * over a module of tens of thousands of statements steps through tree-sitter's hidden repetition nodes at every
 * top-level step; several walks of the same tree paid that several times. */
#ifndef AN_PYNODES_H
#define AN_PYNODES_H
#include <stddef.h>
#include <stdint.h>
#include <tree_sitter/api.h>

typedef struct {
    TSNode node;
    uint32_t next;    /* the index of the first node after this one's subtree */
    uint32_t parent;  /* the index of the node's parent in the index (AN_PYNODE_NONE for the index's root) */
    uint16_t depth;   /* 0 for the root; saturates at UINT16_MAX (every depth limit of the front end is far below) */
    TSFieldId field;  /* the field of the node in its parent (0: none) */
    TSSymbol sym;     /* ts_node_symbol(node), read once */
} an_pynode;

typedef struct an_pynodes_s {
    an_pynode *items;
    uint32_t len, cap;
} an_pynodes;

#define AN_PYNODE_NONE UINT32_MAX

/* The Python grammar's node types with children but no fields (NULL-terminated): their children get no field */
extern const char *const an_pynodes_fieldless[];

/* The nodes of the subtree at root (root first, depth 0). */
void an_pynodes_build(an_pynodes *v, TSNode root);
/* The last node (in the index's order) that starts at or before byte s, AN_PYNODE_NONE when none does; searched
 * outward from *hint (any value; set to the answer), since a caller's positions are mostly near each other. Nodes
 * are in pre-order, so their starts ascend: the nodes that hold byte s are those of that node and its ancestors that
 * end after s. */
uint32_t an_pynodes_last_starting(const an_pynodes *v, uint32_t s, uint32_t *hint);
void an_pynodes_free(an_pynodes *v);

/* Node kinds of a grammar by symbol, for collectors that test a node's type name per node: kinds[s] is i + 1 when
 * symbol s is named names[i] (NULL-terminated, at most 255 names), 0 when none, so a test costs a load, not a
 * strcmp. */
typedef struct {
    const TSLanguage *lang;
    uint8_t *kinds;
    uint32_t count;
} an_pykinds;

void an_pykinds_init(an_pykinds *k, const TSLanguage *lang, const char *const *names);
/* the kind of a node of symbol s (ts_node_symbol: the public symbol of the node's symbol or alias, named as
 * ts_node_type names the node; the error symbol, "ERROR", is past count) */
static inline uint8_t an_pykind_of(const an_pykinds *k, TSSymbol s) { return s < k->count ? k->kinds[s] : 0; }
static inline uint8_t an_pykind(const an_pykinds *k, TSNode n) { return an_pykind_of(k, ts_node_symbol(n)); }
#endif
