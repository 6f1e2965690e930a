/* an_pyfield: field ids of the Python grammar by name, hashed once (see an_pyfield.h). */
#include "analyzer/python/an_pyfield.h"
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

TSNode an_py_field(TSNode n, const char *name, uint32_t len) {
    if (ts_node_is_null(n) || !len || ts_tree_language(n.tree) != tree_sitter_python())
        return ts_node_child_by_field_name(n, name, len);
    pthread_once(&once, make_table);
    for (uint32_t s = slot(name, len); table[s].name; s = (s + 1) & (SLOTS - 1))
        if (table[s].len == len && !memcmp(table[s].name, name, len)) return ts_node_child_by_field_id(n, table[s].id);
    return ts_node_child_by_field_id(n, 0);
}
