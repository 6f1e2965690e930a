/* embed_yaml: build tool that parses YAML files with libyaml and writes their documents as tables (see
 * util/ut_yaml_table.h), so the binary rebuilds them without parsing. A file that is not valid YAML, or holds more
 * than one document, fails the build. Usage: embed_yaml OUT.c SYMBOL FILE... */
#include "util/ut_yaml_table.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *data;
    size_t len, cap;
} buf;

static void put(buf *b, const void *p, size_t n) {
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 4096;
        b->data = realloc(b->data, b->cap);
        if (!b->data) { perror("embed_yaml"); exit(1); }
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static uint32_t pool_add(buf *pool, const void *p, size_t n) {
    uint32_t at = (uint32_t)pool->len;
    put(pool, p, n);
    put(pool, "", 1);
    return at;
}

/* tags repeat on every node (tag:yaml.org,2002:str ...): each distinct one once in the pool */
static uint32_t tag_add(buf *pool, const char *tag) {
    static const char *seen[64];
    static uint32_t at[64];
    static int n;
    for (int i = 0; i < n; i++)
        if (!strcmp(seen[i], tag)) return at[i];
    uint32_t a = pool_add(pool, tag, strlen(tag));
    if (n < 64) {
        char *copy = malloc(strlen(tag) + 1);
        if (!copy) { perror("embed_yaml"); exit(1); }
        seen[n] = strcpy(copy, tag), at[n++] = a;
    }
    return a;
}

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    buf b = {0};
    char chunk[65536];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) put(&b, chunk, k);
    fclose(f);
    put(&b, "", 1);
    *n = b.len - 1;
    return b.data;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: embed_yaml OUT.c SYMBOL FILE...\n"); return 2; }
    buf pool = {0}, nodes = {0}, docs = {0}, items = {0}, pairs = {0};
    for (int i = 3; i < argc; i++) {
        size_t len;
        char *text = slurp(argv[i], &len);
        yaml_parser_t p;
        yaml_document_t d;
        if (!yaml_parser_initialize(&p)) { fprintf(stderr, "embed_yaml: out of memory\n"); return 1; }
        yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
        if (!yaml_parser_load(&p, &d)) {
            fprintf(stderr, "%s:%zu:%zu: YAML error: %s\n", argv[i], p.problem_mark.line + 1, p.problem_mark.column + 1,
                    p.problem ? p.problem : "malformed");
            return 1;
        }
        yaml_document_t next;
        if (!yaml_parser_load(&p, &next) || yaml_document_get_root_node(&next)) {
            fprintf(stderr, "%s: one YAML document a file (the rule loader reads the first)\n", argv[i]);
            return 1;
        }
        yaml_document_delete(&next);
        ut_yaml_tdoc td = {0};
        td.first = (uint32_t)(nodes.len / sizeof(ut_yaml_tnode));
        td.count = (uint32_t)(d.nodes.top - d.nodes.start);
        td.start[0] = (uint32_t)d.start_mark.index, td.start[1] = (uint32_t)d.start_mark.line;
        td.start[2] = (uint32_t)d.start_mark.column;
        td.end[0] = (uint32_t)d.end_mark.index, td.end[1] = (uint32_t)d.end_mark.line;
        td.end[2] = (uint32_t)d.end_mark.column;
        td.start_implicit = (uint8_t)d.start_implicit, td.end_implicit = (uint8_t)d.end_implicit;
        if (d.version_directive || d.tag_directives.start != d.tag_directives.end) {
            fprintf(stderr, "%s: YAML directives are not kept in the built-in tables\n", argv[i]);
            return 1;
        }
        put(&docs, &td, sizeof td);
        for (yaml_node_t *n = d.nodes.start; n < d.nodes.top; n++) {
            ut_yaml_tnode t = {0};
            t.type = (uint8_t)n->type;
            t.tag = n->tag ? tag_add(&pool, (const char *)n->tag) : UINT32_MAX;
            t.start[0] = (uint32_t)n->start_mark.index, t.start[1] = (uint32_t)n->start_mark.line;
            t.start[2] = (uint32_t)n->start_mark.column;
            t.end[0] = (uint32_t)n->end_mark.index, t.end[1] = (uint32_t)n->end_mark.line;
            t.end[2] = (uint32_t)n->end_mark.column;
            if (n->type == YAML_SCALAR_NODE) {
                t.style = (uint8_t)n->data.scalar.style;
                t.a = pool_add(&pool, n->data.scalar.value, n->data.scalar.length);
                t.b = (uint32_t)n->data.scalar.length;
            } else if (n->type == YAML_SEQUENCE_NODE) {
                t.style = (uint8_t)n->data.sequence.style;
                t.a = (uint32_t)(items.len / sizeof(yaml_node_item_t));
                t.b = (uint32_t)(n->data.sequence.items.top - n->data.sequence.items.start);
                put(&items, n->data.sequence.items.start, t.b * sizeof(yaml_node_item_t));
            } else if (n->type == YAML_MAPPING_NODE) {
                t.style = (uint8_t)n->data.mapping.style;
                t.a = (uint32_t)(pairs.len / sizeof(yaml_node_pair_t));
                t.b = (uint32_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
                put(&pairs, n->data.mapping.pairs.start, t.b * sizeof(yaml_node_pair_t));
            }
            put(&nodes, &t, sizeof t);
        }
        yaml_document_delete(&d);
        yaml_parser_delete(&p);
        free(text);
    }
    FILE *out = fopen(argv[1], "w");
    if (!out) { perror(argv[1]); return 1; }
    fprintf(out, "/* generated by tools/embed_yaml.c from the rule files; do not edit */\n");
    fprintf(out, "#include \"util/ut_yaml_table.h\"\n");
    fprintf(out, "static const char pool[%zu] = \"", pool.len + 1);
    for (size_t i = 0, col = 0; i < pool.len; i++) {
        fprintf(out, "\\%03o", (unsigned char)pool.data[i]);
        if (++col == 40) { fprintf(out, "\"\n\""); col = 0; }
    }
    fprintf(out, "\";\nstatic const ut_yaml_tnode nodes[] = {\n");
    size_t nn = nodes.len / sizeof(ut_yaml_tnode);
    for (size_t i = 0; i < nn; i++) {
        const ut_yaml_tnode *t = (const ut_yaml_tnode *)nodes.data + i;
        fprintf(out, "{%u,%u,%uu,%u,%u,{%u,%u,%u},{%u,%u,%u}},\n", t->type, t->style, t->tag, t->a, t->b, t->start[0],
                t->start[1], t->start[2], t->end[0], t->end[1], t->end[2]);
    }
    fprintf(out, "{0}};\nstatic yaml_node_item_t items[] = {");
    size_t ni = items.len / sizeof(yaml_node_item_t);
    for (size_t i = 0; i < ni; i++) fprintf(out, "%d,%s", ((yaml_node_item_t *)items.data)[i], i % 20 == 19 ? "\n" : "");
    fprintf(out, "0};\nstatic yaml_node_pair_t pairs[] = {");
    size_t np = pairs.len / sizeof(yaml_node_pair_t);
    for (size_t i = 0; i < np; i++) {
        const yaml_node_pair_t *q = (const yaml_node_pair_t *)pairs.data + i;
        fprintf(out, "{%d,%d},%s", q->key, q->value, i % 10 == 9 ? "\n" : "");
    }
    fprintf(out, "{0, 0}};\nstatic const ut_yaml_tdoc docs[] = {\n");
    size_t nd = docs.len / sizeof(ut_yaml_tdoc);
    for (size_t i = 0; i < nd; i++) {
        const ut_yaml_tdoc *d = (const ut_yaml_tdoc *)docs.data + i;
        fprintf(out, "{\"%s\", %u, %u, {%u,%u,%u}, {%u,%u,%u}, %u, %u},\n", argv[3 + i], d->first, d->count, d->start[0],
                d->start[1], d->start[2], d->end[0], d->end[1], d->end[2], d->start_implicit, d->end_implicit);
    }
    fprintf(out, "{0}};\nconst ut_yaml_table %s = {pool, nodes, items, pairs, docs, %zu};\n", argv[2], nd);
    return fclose(out) != 0;
}
