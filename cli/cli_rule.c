/* cli_rule: `xpuify rule CODE|NAME` and `xpuify rule --all [--format text|json|markdown]`: the catalog as
 * documentation (docs/rules.md is this command's markdown output). */
#include "output/out.h"
#include "cli/cli.h"
#include <cjson/cJSON.h>
#include <stdio.h>

static cJSON *rule_json(const an_rule *r) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "code", r->code);
    cJSON_AddStringToObject(o, "name", r->name);
    cJSON_AddStringToObject(o, "language", an_lang_name(r->lang));
    cJSON_AddStringToObject(o, "severity", an_severity_name(r->severity));
    cJSON_AddStringToObject(o, "fix", an_applicability_name(r->fix));
    cJSON_AddStringToObject(o, "summary", r->summary);
    cJSON_AddStringToObject(o, "message", r->message);
    if (r->min_torch) cJSON_AddStringToObject(o, "min_torch", r->min_torch);
    cJSON_AddStringToObject(o, "doc", r->doc ? r->doc : "");
    cJSON_AddStringToObject(o, "origin", r->origin);
    if (r->library) cJSON_AddStringToObject(o, "library", r->library);
    if (r->examples.flag.len || r->examples.ok.len) {
        cJSON *ex = cJSON_AddObjectToObject(o, "examples");
        cJSON *fl = cJSON_AddArrayToObject(ex, "flag"), *ok = cJSON_AddArrayToObject(ex, "ok");
        for (size_t i = 0; i < r->examples.flag.len; i++) cJSON_AddItemToArray(fl, cJSON_CreateString(r->examples.flag.items[i]));
        for (size_t i = 0; i < r->examples.ok.len; i++) cJSON_AddItemToArray(ok, cJSON_CreateString(r->examples.ok.items[i]));
    }
    if (r->pattern) cJSON_AddStringToObject(o, "pattern", r->pattern);
    if (r->files.len) {
        cJSON *f = cJSON_AddArrayToObject(o, "files");
        for (size_t i = 0; i < r->files.len; i++) cJSON_AddItemToArray(f, cJSON_CreateString(r->files.items[i]));
    }
    if (r->headers.len) {
        cJSON *f = cJSON_AddArrayToObject(o, "headers");
        for (size_t i = 0; i < r->headers.len; i++) cJSON_AddItemToArray(f, cJSON_CreateString(r->headers.items[i]));
    }
    if (r->lang == AN_LANG_C && r->entries.len) {
        cJSON *api = cJSON_AddArrayToObject(o, "api");
        for (size_t i = 0; i < r->entries.len; i++) {
            const an_entry *e = r->entries.items[i];
            cJSON *x = cJSON_CreateObject();
            char name[512];
            snprintf(name, sizeof name, "%s%s", e->name, e->wildcard ? "*" : "");
            cJSON_AddStringToObject(x, "name", name);
            cJSON_AddStringToObject(x, "kind", an_kind_name(e->kind));
#define OPT(field, key) if (e->field) cJSON_AddStringToObject(x, key, e->field)
            OPT(section, "section");
            OPT(replacement, "portable");
            OPT(sycl, "sycl");
            OPT(level_zero, "level_zero");
            OPT(oneccl, "oneccl");
            OPT(parent, "parent");
            OPT(since, "since");
            OPT(deprecated, "deprecated");
            OPT(removed, "removed");
            OPT(alias_of, "alias_of");
            OPT(note, "note");
#undef OPT
            cJSON_AddItemToArray(api, x);
        }
        cJSON_AddArrayToObject(o, "qualnames");
        return o;
    }
    cJSON *ents = cJSON_AddArrayToObject(o, "qualnames");
    for (size_t i = 0; i < r->entries.len; i++) {
        const an_entry *e = r->entries.items[i];
        cJSON *x = cJSON_CreateObject();
        char name[512];
        snprintf(name, sizeof name, "%s%s", e->name, e->wildcard ? ".*" : "");
        cJSON_AddStringToObject(x, "name", name);
        if (e->replacement) cJSON_AddStringToObject(x, "replacement", e->replacement);
        if (e->compat) cJSON_AddStringToObject(x, "compat", e->compat);
        if (e->min_torch) cJSON_AddStringToObject(x, "min_torch", e->min_torch);
        cJSON_AddStringToObject(x, "fix", an_applicability_name(e->fix));
        if (e->has_compat_fix) cJSON_AddStringToObject(x, "compat_fix", an_applicability_name(e->compat_fix));
        if (e->note) cJSON_AddStringToObject(x, "note", e->note);
        cJSON_AddItemToArray(ents, x);
    }
    return o;
}

static void md_escape_pipes(FILE *fp, const char *s) {
    for (; s && *s; s++) {
        if (*s == '|') fputs("\\|", fp);
        else if (*s == '\n') fputc(' ', fp);
        else fputc(*s, fp);
    }
}

static void rule_markdown(const an_rule *r, FILE *fp) {
    fprintf(fp, "## %s\n\n### `%s` (%s)\n\n", r->code, r->name, r->code);
    fprintf(fp, "- Language: %s\n- Severity: %s\n- Fix: %s\n", an_lang_name(r->lang), an_severity_name(r->severity),
            an_applicability_name(r->fix));
    if (r->min_torch) fprintf(fp, "- Replacement needs torch >= %s\n", r->min_torch);
    fprintf(fp, "\n%s\n\n", r->summary);
    if (r->doc) fprintf(fp, "%s\n", r->doc);
    if (r->pattern) {
        fprintf(fp, "Pattern (PCRE2, over the text with comments masked):\n\n```\n%s\n```\n\n", r->pattern);
        if (r->files.len) {
            fputs("Files:", fp);
            for (size_t i = 0; i < r->files.len; i++) fprintf(fp, "%s `%s`", i ? "," : "", r->files.items[i]);
            fputs("\n\n", fp);
        }
    }
    if (r->lang == AN_LANG_C && r->entries.len) {
        size_t by_kind[AN_KIND__COUNT] = {0};
        for (size_t i = 0; i < r->entries.len; i++) by_kind[r->entries.items[i]->kind]++;
        fprintf(fp, "Table: %s, %zu rows (", r->library ? r->library : r->code, r->entries.len);
        bool first = true;
        for (int k = 1; k < AN_KIND__COUNT; k++)
            if (by_kind[k]) fprintf(fp, "%s%zu %s", first ? "" : ", ", by_kind[k], an_kind_name((an_api_kind)k)), first = false;
        fprintf(fp, "); every row is in [the C API tables](c-api-tables.md#%s).\n\n", r->code);
    } else if (r->entries.len) {
        fprintf(fp, "| CUDA-only name | Device-agnostic replacement | torch | fix | note |\n|---|---|---|---|---|\n");
        for (size_t i = 0; i < r->entries.len; i++) {
            const an_entry *e = r->entries.items[i];
            fprintf(fp, "| `%s%s` | ", e->name, e->wildcard ? ".*" : "");
            if (e->replacement) { fputc('`', fp); md_escape_pipes(fp, e->replacement); fputc('`', fp); }
            else fputs("(none)", fp);
            fprintf(fp, " | %s | %s%s%s%s | ", e->min_torch ? e->min_torch : "", an_applicability_name(e->fix),
                    e->has_compat_fix ? " (compat: " : "", e->has_compat_fix ? an_applicability_name(e->compat_fix) : "",
                    e->has_compat_fix ? ")" : "");
            md_escape_pipes(fp, e->note);
            fputs(" |\n", fp);
        }
        fputc('\n', fp);
    }
    if (r->examples.flag.len || r->examples.ok.len) {
        fprintf(fp, "Flagged:\n\n```%s\n", r->lang == AN_LANG_PYTHON ? "python" : r->lang == AN_LANG_C ? "cpp" : "");
        for (size_t i = 0; i < r->examples.flag.len; i++) fprintf(fp, "%s\n", r->examples.flag.items[i]);
        fprintf(fp, "```\n\nNot flagged:\n\n```%s\n", r->lang == AN_LANG_PYTHON ? "python" : r->lang == AN_LANG_C ? "cpp" : "");
        for (size_t i = 0; i < r->examples.ok.len; i++) fprintf(fp, "%s\n", r->examples.ok.items[i]);
        fputs("```\n\n", fp);
    }
}

static void rule_text(const an_rule *r, FILE *fp) {
    fprintf(fp, "%s %s (%s, %s, fix: %s)\n\n%s\n\n", r->code, r->name, an_lang_name(r->lang),
            an_severity_name(r->severity), an_applicability_name(r->fix), r->summary);
    if (r->doc) fprintf(fp, "%s\n", r->doc);
    if (r->pattern) fprintf(fp, "pattern: %s\n", r->pattern);
    for (size_t i = 0; i < r->files.len; i++) fprintf(fp, "%s%s%s", i ? ", " : "files: ", r->files.items[i], i + 1 == r->files.len ? "\n" : "");
    for (size_t i = 0; i < r->entries.len; i++) {
        const an_entry *e = r->entries.items[i];
        if (r->lang == AN_LANG_C) {
            fprintf(fp, "  %s%s (%s%s%s)", e->name, e->wildcard ? "*" : "", an_kind_name(e->kind), e->section ? ", " : "",
                    e->section ? e->section : "");
            if (e->replacement) fprintf(fp, "  portable: %s", e->replacement);
            if (e->sycl) fprintf(fp, "  SYCL: %s", e->sycl);
            if (e->oneccl) fprintf(fp, "  oneCCL: %s", e->oneccl);
            if (e->level_zero) fprintf(fp, "  Level Zero: %s", e->level_zero);
            fputc('\n', fp);
            continue;
        }
        fprintf(fp, "  %s%s -> %s%s%s%s\n", e->name, e->wildcard ? ".*" : "", e->replacement ? e->replacement : "(none)",
                e->min_torch ? "  (torch >= " : "", e->min_torch ? e->min_torch : "", e->min_torch ? ")" : "");
    }
}

int cli_rule(int argc, char **argv) {
    bool all = false, ctables = false;
    const char *fmt = "text", *v, *name = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--all")) all = true;
        else if (!strcmp(argv[i], "--c-tables")) ctables = true;
        else if (cli_opt(argc, argv, &i, "--format", &v) || cli_opt(argc, argv, &i, "--output-format", &v) ||
                 cli_opt(argc, argv, &i, "-f", &v)) {
            if (!v) return CLI_EXIT_USAGE;
            fmt = v;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("Usage: xpuify rule CODE|NAME [--format text|json|markdown]\n       xpuify rule --all [--format text|json|markdown]\n"
                   "       xpuify rule --c-tables     (the C/C++/CUDA API tables as markdown)\n");
            return 0;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "xpuify: error: unknown option `%s`\n", argv[i]);
            return CLI_EXIT_USAGE;
        } else name = argv[i];
    }
    if (strcmp(fmt, "text") && strcmp(fmt, "json") && strcmp(fmt, "markdown")) {
        fprintf(stderr, "xpuify: error: unknown format `%s` (known: text, json, markdown)\n", fmt);
        return CLI_EXIT_USAGE;
    }
    if (ctables) {
        an_catalog *cat = cli_load_catalog(NULL, 0);
        if (!cat) return CLI_EXIT_USAGE;
        cli_ctables_markdown(cat, stdout);
        an_catalog_free(cat);
        return 0;
    }
    if (!all && !name) {
        fprintf(stderr, "xpuify: error: `rule` needs a rule code or name, or --all\n");
        return CLI_EXIT_USAGE;
    }
    an_catalog *cat = cli_load_catalog(NULL, 0);
    if (!cat) return CLI_EXIT_USAGE;
    int rc = 0;
    if (all) {
        if (!strcmp(fmt, "json")) {
            cJSON *arr = cJSON_CreateArray();
            for (size_t i = 0; i < an_catalog_count(cat); i++) cJSON_AddItemToArray(arr, rule_json(an_catalog_rule(cat, i)));
            char *s = cJSON_Print(arr);
            puts(s);
            cJSON_free(s);
            cJSON_Delete(arr);
        } else if (!strcmp(fmt, "markdown")) {
            printf("# xpuify rules\n\nGenerated by `xpuify rule --all --format markdown` from `rules/`; do not edit.\n\n");
            printf("| Code | Name | Severity | Fix | Summary |\n|---|---|---|---|---|\n");
            for (size_t i = 0; i < an_catalog_count(cat); i++) {
                const an_rule *r = an_catalog_rule(cat, i);
                printf("| [%s](#%s) | `%s` | %s | %s | ", r->code, r->code, r->name, an_severity_name(r->severity),
                       an_applicability_name(r->fix));
                md_escape_pipes(stdout, r->summary);
                printf(" |\n");
            }
            printf("\n");
            for (size_t i = 0; i < an_catalog_count(cat); i++) rule_markdown(an_catalog_rule(cat, i), stdout);
        } else {
            for (size_t i = 0; i < an_catalog_count(cat); i++) {
                const an_rule *r = an_catalog_rule(cat, i);
                printf("%-7s %-36s %-8s fix:%-7s %s\n", r->code, r->name, an_severity_name(r->severity),
                       an_applicability_name(r->fix), r->summary);
            }
        }
    } else {
        const an_rule *r = an_catalog_find(cat, name);
        if (!r) {
            const char *near = an_catalog_suggest(cat, name);
            fprintf(stderr, "xpuify: error: no rule `%s`%s%s%s (see `xpuify rule --all`)\n", name,
                    near ? "; did you mean `" : "", near ? near : "", near ? "`?" : "");
            rc = CLI_EXIT_USAGE;
        } else if (!strcmp(fmt, "json")) {
            cJSON *o = rule_json(r);
            char *s = cJSON_Print(o);
            puts(s);
            cJSON_free(s);
            cJSON_Delete(o);
        } else if (!strcmp(fmt, "markdown")) rule_markdown(r, stdout);
        else rule_text(r, stdout);
    }
    an_catalog_free(cat);
    return rc;
}
