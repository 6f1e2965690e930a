/* ut_yaml_table: YAML documents rebuilt from the tables tools/embed_yaml.c writes (see ut_yaml_table.h). */
#include "util/ut_yaml_table.h"
#include "util/ut_mem.h"
#include <string.h>

static yaml_mark_t mark(const uint32_t m[3]) { return (yaml_mark_t){m[0], m[1], m[2]}; }

bool ut_yaml_table_doc(const ut_yaml_table *t, size_t i, yaml_document_t *doc) {
    memset(doc, 0, sizeof *doc);
    if (i >= t->ndocs) return false;
    const ut_yaml_tdoc *d = &t->docs[i];
    yaml_node_t *nodes = ut_malloc((d->count ? d->count : 1) * sizeof *nodes);
    for (uint32_t k = 0; k < d->count; k++) {
        const ut_yaml_tnode *s = &t->nodes[d->first + k];
        yaml_node_t *n = &nodes[k];
        memset(n, 0, sizeof *n);
        n->type = (yaml_node_type_t)s->type;
        n->tag = s->tag == UINT32_MAX ? NULL : (yaml_char_t *)(t->pool + s->tag);
        n->start_mark = mark(s->start), n->end_mark = mark(s->end);
        if (s->type == YAML_SCALAR_NODE) {
            n->data.scalar.value = (yaml_char_t *)(t->pool + s->a);
            n->data.scalar.length = s->b;
            n->data.scalar.style = (yaml_scalar_style_t)s->style;
        } else if (s->type == YAML_SEQUENCE_NODE) {
            n->data.sequence.items.start = t->items + s->a;
            n->data.sequence.items.end = n->data.sequence.items.top = t->items + s->a + s->b;
            n->data.sequence.style = (yaml_sequence_style_t)s->style;
        } else if (s->type == YAML_MAPPING_NODE) {
            n->data.mapping.pairs.start = t->pairs + s->a;
            n->data.mapping.pairs.end = n->data.mapping.pairs.top = t->pairs + s->a + s->b;
            n->data.mapping.style = (yaml_mapping_style_t)s->style;
        }
    }
    doc->nodes.start = nodes;
    doc->nodes.end = doc->nodes.top = nodes + d->count;
    doc->start_mark = mark(d->start), doc->end_mark = mark(d->end);
    doc->start_implicit = d->start_implicit, doc->end_implicit = d->end_implicit;
    return true;
}

void ut_yaml_table_doc_free(yaml_document_t *doc) {
    ut_free(doc->nodes.start);
    memset(doc, 0, sizeof *doc);
}
