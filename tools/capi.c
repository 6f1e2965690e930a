/* capi: maintainer tool for the C API tables. Not installed; built as build/tools/capi.
 *   capi extract HEADER [-I DIR]...   what HEADER declares: "kind name [enum]" per line
 *   capi coverage [CUDA_INCLUDE_DIR]  per table with `headers`: functions the tables know / functions declared,
 *                                     as markdown; --missing lists the unknown ones */
#include "analyzer/c/an_capi.h"
#include "cli/cli.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int extract(int argc, char **argv) {
    UT_VEC(const char *) inc = {0};
    const char *header = NULL;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "-I") && i + 1 < argc) ut_vec_push(&inc, argv[++i]);
        else if (!strncmp(argv[i], "-I", 2)) ut_vec_push(&inc, argv[i] + 2);
        else header = argv[i];
    }
    if (!header) { fprintf(stderr, "usage: capi extract HEADER [-I DIR]...\n"); return 2; }
    char abs[PATH_MAX];
    if (!realpath(header, abs)) { perror(header); return 2; }
    an_capi_decls d = {0};
    char *why;
    if (!an_capi_extract(abs, inc.items, inc.len, &d, &why)) { fprintf(stderr, "capi: %s\n", why); return 1; }
    for (size_t i = 0; i < d.len; i++)
        printf("%s %s%s%s\n", an_kind_name(d.items[i].kind), d.items[i].name, d.items[i].parent ? " " : "",
               d.items[i].parent ? d.items[i].parent : "");
    an_capi_decls_free(&d);
    ut_vec_free(&inc);
    return 0;
}

static int coverage(int argc, char **argv) {
    const char *dir = "/usr/local/cuda/include";
    bool missing = false;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--missing")) missing = true;
        else dir = argv[i];
    }
    an_catalog *cat = cli_load_catalog(NULL, 0);
    if (!cat) return 2;
    const char *inc[] = {dir};
    printf("| Table | Library | Headers | Functions declared | Known to the tables | Coverage |\n|---|---|---|---|---|---|\n");
    int rc = 0;
    for (size_t i = 0; i < an_catalog_count(cat); i++) {
        const an_rule *r = an_catalog_rule(cat, i);
        if (!r->headers.len) continue;
        size_t declared = 0, known = 0;
        ut_buf miss, hdrs;
        ut_buf_init(&miss);
        ut_buf_init(&hdrs);
        for (size_t h = 0; h < r->headers.len; h++) {
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s/%s", dir, r->headers.items[h]);
            ut_buf_printf(&hdrs, "%s`%s`", h ? ", " : "", r->headers.items[h]);
            an_capi_decls d = {0};
            char *why;
            if (!an_capi_extract(path, inc, 1, &d, &why)) {
                fprintf(stderr, "capi: %s\n", why);
                free(why);
                rc = 1;
                continue;
            }
            for (size_t k = 0; k < d.len; k++) {
                if (d.items[k].kind != AN_KIND_FUNCTION || !strncmp(d.items[k].name, "operator", 8)) continue; /* C++ operators are not named APIs */
                declared++;
                if (an_catalog_lookup_c(cat, d.items[k].name, strlen(d.items[k].name))) known++;
                else ut_buf_printf(&miss, "%s\n", d.items[k].name);
            }
            an_capi_decls_free(&d);
        }
        printf("| %s | %s | %s | %zu | %zu | %.1f%% |\n", r->code, r->library ? r->library : "", hdrs.data, declared,
               known, declared ? 100.0 * (double)known / (double)declared : 100.0);
        if (missing && miss.len) fprintf(stderr, "%s missing:\n%s", r->code, miss.data);
        ut_buf_free(&miss);
        ut_buf_free(&hdrs);
    }
    an_catalog_free(cat);
    return rc;
}

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "extract")) return extract(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "coverage")) return coverage(argc, argv);
    fprintf(stderr, "usage: capi extract HEADER [-I DIR]... | capi coverage [CUDA_INCLUDE_DIR] [--missing]\n");
    return 2;
}
