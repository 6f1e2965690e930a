/* an_pyfield: field ids of the Python grammar by name, hashed once (see an_pyfield.h). */
#include "analyzer/python/an_pyfield.h"
#include "analyzer/python/an_pynodes.h"
#include <pthread.h>
#include <string.h>

const TSLanguage *tree_sitter_python(void);

#define SLOTS 256 /* a power of two, well above the grammar's field count */

static struct {
    const char *name;
    uint32_t len;
    TSFieldId id;
} table[SLOTS];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static uint32_t slot(const char *name, uint32_t len) {
    return (len * 31u + (unsigned char)name[0] * 7u + (unsigned char)name[len - 1]) & (SLOTS - 1);
}

static void make_table(void) {
    const TSLanguage *l = tree_sitter_python();
    uint32_t n = ts_language_field_count(l);
    for (uint32_t id = 1; id <= n && id < SLOTS; id++) {
        const char *name = ts_language_field_name_for_id(l, (TSFieldId)id);
        uint32_t len = name ? (uint32_t)strlen(name) : 0;
        if (!len) continue;
        uint32_t s = slot(name, len);
        while (table[s].name) s = (s + 1) & (SLOTS - 1);
        table[s].name = name, table[s].len = len, table[s].id = (TSFieldId)id;
    }
}

static _Thread_local const an_pynodes *index_set; /* the index this thread reads (an_py_field_index) */
static _Thread_local uint32_t index_hint;           /* where the last node was found: the next is mostly near */

const struct an_pynodes_s *an_py_field_index(const struct an_pynodes_s *v) {
    const an_pynodes *old = index_set;
    index_set = v;
    index_hint = 0;
    return old;
}

/* the position of n in the index v: the nodes starting at n's start end the run of those starting at or before it
 * (pre-order: starts ascend), searched outward from the last one found; false when n is not listed */
static bool find_node(const an_pynodes *v, TSNode n, uint32_t *at) {
    uint32_t s = n.context[0];
    for (uint32_t i = an_pynodes_last_starting(v, s, &index_hint); i != AN_PYNODE_NONE && v->items[i].node.context[0] == s;
         i = i ? i - 1 : AN_PYNODE_NONE)
        if (v->items[i].node.id == n.id) {
            *at = index_hint = i;
            return true;
        }
    return false;
}

static TSNode child_by_field(TSNode n, TSFieldId id) {
    const an_pynodes *v = index_set;
    uint32_t i;
    if (id && v && v->len && v->items[0].node.tree == n.tree && find_node(v, n, &i)) {
        for (uint32_t j = i + 1; j < v->items[i].next; j = v->items[j].next)
            if (v->items[j].field == id) return v->items[j].node;
        return (TSNode){{0, 0, 0, 0}, NULL, NULL}; /* the null node, as tree-sitter 0.20 makes it */
    }
    return ts_node_child_by_field_id(n, id);
}

TSNode an_py_field(TSNode n, const char *name, uint32_t len) {
    if (ts_node_is_null(n) || !len || ts_tree_language(n.tree) != tree_sitter_python())
        return ts_node_child_by_field_name(n, name, len);
    pthread_once(&once, make_table);
    for (uint32_t s = slot(name, len); table[s].name; s = (s + 1) & (SLOTS - 1))
        if (table[s].len == len && !memcmp(table[s].name, name, len)) return child_by_field(n, table[s].id);
    return ts_node_child_by_field_id(n, 0);
}
