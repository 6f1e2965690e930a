/* lsp_config: the minimal project configuration reader (select, ignore, target from the closest .xpuify.yml;
 * other keys are left to the full configuration system). */
#include "lsp/lsp_config.h"
#include "util/ut_mem.h"
#include <stdio.h>
#include <sys/stat.h>
#include <yaml.h>

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...) {
    ut_buf b;
    ut_buf_init(&b);
    va_list ap;
    va_start(ap, f);
    ut_buf_vprintf(&b, f, ap);
    va_end(ap);
    return ut_buf_take(&b);
}

/* The closest .xpuify.yml in the file's directory or above. */
static char *find_config(const char *file_path) {
    if (file_path[0] != '/') return NULL;
    char *dir = ut_strdup(file_path);
    char *slash = strrchr(dir, '/');
    char *found = NULL;
    while (slash) {
        *slash = 0;
        char *p = fmt("%s/%s", dir, LSP_CONFIG_NAME);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) { found = p; break; }
        ut_free(p);
        slash = strrchr(dir, '/');
    }
    ut_free(dir);
    return found;
}

static const char *scalar(yaml_document_t *doc, yaml_node_t *n) {
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
    (void)doc;
}

/* A list: a sequence of scalars or one comma-separated scalar. */
static char *list(yaml_document_t *doc, yaml_node_t *n) {
    if (n->type == YAML_SCALAR_NODE) return ut_strdup((const char *)n->data.scalar.value);
    if (n->type != YAML_SEQUENCE_NODE) return NULL;
    ut_buf b;
    ut_buf_init(&b);
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
        const char *s = scalar(doc, yaml_document_get_node(doc, *it));
        if (!s) { ut_buf_free(&b); return NULL; }
        ut_buf_printf(&b, "%s%s", b.len ? "," : "", s);
    }
    char *r = ut_buf_take(&b);
    return r ? r : ut_strdup("");
}

bool lsp_config_minimal(void *ctx, const char *file_path, lsp_settings *out, char **origin, char **error) {
    (void)ctx;
    *origin = NULL, *error = NULL;
    char *path = find_config(file_path);
    if (!path) return true;
    FILE *f = fopen(path, "rb");
    if (!f) { *error = fmt("%s: cannot read", path); ut_free(path); return false; }
    yaml_parser_t p;
    yaml_document_t doc;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_file(&p, f);
    bool ok = yaml_parser_load(&p, &doc);
    if (!ok) {
        *error = fmt("%s:%zu:%zu: %s", path, p.problem_mark.line + 1, p.problem_mark.column + 1,
                     p.problem ? p.problem : "not valid YAML");
        yaml_parser_delete(&p);
        fclose(f);
        ut_free(path);
        return false;
    }
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root && root->type == YAML_MAPPING_NODE) {
        for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top && ok; pr++) {
            yaml_node_t *kn = yaml_document_get_node(&doc, pr->key), *vn = yaml_document_get_node(&doc, pr->value);
            const char *k = scalar(&doc, kn);
            if (!k) continue;
            char **dst = !strcmp(k, "select") ? &out->select : !strcmp(k, "ignore") ? &out->ignore : NULL;
            if (dst) {
                char *v = list(&doc, vn);
                if (!v) {
                    *error = fmt("%s:%zu:%zu: `%s` must be a list of rule codes, prefixes or names", path,
                                 vn->start_mark.line + 1, vn->start_mark.column + 1, k);
                    ok = false;
                    break;
                }
                ut_free(*dst);
                *dst = v;
            } else if (!strcmp(k, "target")) {
                const char *v = scalar(&doc, vn);
                if (!v || (strcmp(v, "auto") && strcmp(v, "accelerator") && strcmp(v, "compat") && strcmp(v, "none"))) {
                    *error = fmt("%s:%zu:%zu: `target` must be one of auto, accelerator, compat, none", path,
                                 vn->start_mark.line + 1, vn->start_mark.column + 1);
                    ok = false;
                    break;
                }
                ut_free(out->target);
                out->target = ut_strdup(v);
            }
        }
    } else if (root && !(root->type == YAML_SCALAR_NODE && !root->data.scalar.length)) {
        *error = fmt("%s:%zu:%zu: the configuration must be a mapping", path, root->start_mark.line + 1, root->start_mark.column + 1);
        ok = false;
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&p);
    fclose(f);
    if (ok) *origin = path;
    else ut_free(path);
    return ok;
}
