/* an_pynodes: the nodes of a tree in cursor order, built once per tree (see an_pynodes.h). */
#include "analyzer/python/an_pynodes.h"
#include "util/ut_mem.h"
#include <pthread.h>
#include <string.h>

const TSLanguage *tree_sitter_python(void);

/* The Python grammar's node types that have children but no fields (its node-types.json; tests/unit/test_pynodes.c
 * checks the list against it). A child of such a node has no field, so the index need not ask the cursor, whose
 * answer walks up through every hidden node between the child and its parent: the repetition nodes of a module of
 * tens of thousands of statements, or of a list as long, make that the most costly step of the walk. */
const char *const an_pynodes_fieldless[] = {
    "argument_list", "assert_statement", "await", "case_pattern", "chevron", "class_pattern", "complex_pattern",
    "concatenated_string", "conditional_expression", "constrained_type", "decorator", "delete_statement",
    "dictionary", "dictionary_splat", "dictionary_splat_pattern", "dotted_name", "except_group_clause",
    "expression_list", "expression_statement", "finally_clause", "format_specifier", "generic_type",
    "global_statement", "if_clause", "keyword_pattern", "lambda_parameters", "list", "list_pattern", "list_splat",
    "list_splat_pattern", "member_type", "module", "nonlocal_statement", "parameters", "parenthesized_expression",
    "parenthesized_list_splat", "pattern_list", "relative_import", "return_statement", "set", "slice",
    "splat_pattern", "splat_type", "string", "string_content", "tuple", "tuple_pattern", "type", "type_parameter",
    "union_pattern", "union_type", "with_clause", "yield", NULL};
static an_pykinds fieldless;
static pthread_once_t fieldless_once = PTHREAD_ONCE_INIT;
static void fieldless_init(void) { an_pykinds_init(&fieldless, tree_sitter_python(), an_pynodes_fieldless); }

static void push(an_pynodes *v, TSNode n, uint32_t depth, TSFieldId field, uint32_t parent) {
    if (v->len == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 256;
        v->items = ut_realloc(v->items, (size_t)v->cap * sizeof *v->items);
    }
    an_pynode *p = &v->items[v->len++];
    p->node = n;
    p->next = 0;
    p->parent = parent;
    p->depth = depth < UINT16_MAX ? (uint16_t)depth : UINT16_MAX;
    p->field = field;
    p->sym = ts_node_symbol(n);
}

void an_pynodes_build(an_pynodes *v, TSNode root) {
    v->items = NULL, v->len = v->cap = 0;
    /* the open ancestors' indexes: each gets its `next` when the cursor leaves it */
    uint32_t *open = NULL, nopen = 0, capopen = 0;
    TSTreeCursor cur = ts_tree_cursor_new(root);
    bool python = !ts_node_is_null(root) && ts_tree_language(root.tree) == tree_sitter_python();
    if (python) pthread_once(&fieldless_once, fieldless_init);
    uint32_t depth = 0;
    for (;;) {
        if (nopen == capopen) {
            capopen = capopen ? capopen * 2 : 64;
            open = ut_realloc(open, (size_t)capopen * sizeof *open);
        }
        open[nopen++] = v->len;
        uint32_t parent = nopen >= 2 ? open[nopen - 2] : AN_PYNODE_NONE;
        bool no_field = !depth || (python && an_pykind_of(&fieldless, v->items[parent].sym));
        push(v, ts_tree_cursor_current_node(&cur), depth, no_field ? 0 : ts_tree_cursor_current_field_id(&cur), parent);
        if (ts_tree_cursor_goto_first_child(&cur)) {
            depth++;
            continue;
        }
        v->items[open[--nopen]].next = v->len; /* a leaf */
        while (!ts_tree_cursor_goto_next_sibling(&cur)) {
            if (!ts_tree_cursor_goto_parent(&cur)) goto done;
            depth--;
            v->items[open[--nopen]].next = v->len;
        }
    }
done:
    while (nopen) v->items[open[--nopen]].next = v->len;
    ut_free(open);
    ts_tree_cursor_delete(&cur);
}

uint32_t an_pynodes_last_starting(const an_pynodes *v, uint32_t s, uint32_t *hint) {
    uint32_t len = v->len;
    if (!len) return AN_PYNODE_NONE;
    uint32_t h = *hint < len ? *hint : 0, a, b, step = 1;
    /* the first index whose start is past s lies in [a, b] (b == len: none is) */
    if (v->items[h].node.context[0] <= s) {
        while (h + step < len && v->items[h + step].node.context[0] <= s) h += step, step *= 2;
        a = h + 1, b = h + step < len ? h + step : len;
    } else {
        while (h >= step && v->items[h - step].node.context[0] > s) h -= step, step *= 2;
        a = h >= step ? h - step + 1 : 0, b = h;
    }
    while (a < b) {
        uint32_t m = a + (b - a) / 2;
        if (v->items[m].node.context[0] <= s) a = m + 1;
        else b = m;
    }
    if (!a) return AN_PYNODE_NONE;
    *hint = a - 1;
    return a - 1;
}

void an_pykinds_init(an_pykinds *k, const TSLanguage *lang, const char *const *names) {
    k->lang = lang;
    k->count = ts_language_symbol_count(lang);
    k->kinds = ut_calloc(k->count ? k->count : 1, 1);
    /* ts_node_symbol gives the public symbol of a node's symbol (or alias), which has the same name; the error
     * symbol ((TSSymbol)-1, "ERROR") is past count: no kind */
    for (uint32_t s = 0; s < k->count; s++) {
        const char *t = ts_language_symbol_name(lang, (TSSymbol)s);
        for (int i = 0; t && names[i] && i < 255; i++)
            if (!strcmp(t, names[i])) {
                k->kinds[s] = (uint8_t)(i + 1);
                break;
            }
    }
}

void an_pynodes_free(an_pynodes *v) {
    ut_free(v->items);
    v->items = NULL, v->len = v->cap = 0;
}
