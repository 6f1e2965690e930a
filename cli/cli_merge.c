/* cli_merge: `xpuify merge-sarif -o OUT IN...`: joins the SARIF logs of `check --shard K/N` runs into one log with
 * one run: the rules of every input (deduplicated by id, ruleIndex renumbered), every result once (one with the
 * rule and fingerprint of a result already merged, e.g. from a log given twice, is dropped with a warning), the tool of the first input. Inputs
 * from different tools or xpuify versions are refused. */
#include "cli/cli.h"
#include "util/ut_hash.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>

static cJSON *read_json(const char *path, ut_buf *err) {
    FILE *f = fopen(path, "rb");
    if (!f) { ut_buf_printf(err, "%s: %s", path, strerror(errno)); return NULL; }
    ut_buf b;
    ut_buf_init(&b);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) ut_buf_append(&b, chunk, n);
    fclose(f);
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(b.data ? b.data : "", b.len, &end, false);
    if (!j) ut_buf_printf(err, "%s: not valid JSON (near byte %ld)", path, end && b.data ? (long)(end - b.data) : 0L);
    ut_buf_free(&b);
    return j;
}

static const char *str_at(cJSON *o, const char *a, const char *b, const char *c) {
    cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b) x = cJSON_GetObjectItemCaseSensitive(x, b);
    if (c) x = cJSON_GetObjectItemCaseSensitive(x, c);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

/* The findings merged so far, by rule and fingerprint: open addressing over heap strings, doubled at half load. */
typedef struct {
    char **slot;
    size_t cap, len;
} seen_set;

static bool seen_add(seen_set *s, char *key) {
    if (2 * (s->len + 1) > s->cap) {
        seen_set g = {ut_calloc(s->cap ? 2 * s->cap : 256, sizeof(char *)), s->cap ? 2 * s->cap : 256, 0};
        for (size_t i = 0; i < s->cap; i++)
            if (s->slot[i]) seen_add(&g, s->slot[i]);
        ut_free(s->slot);
        *s = g;
    }
    size_t i = (size_t)ut_fnv1a(1469598103934665603ULL, key, strlen(key)) & (s->cap - 1);
    for (; s->slot[i]; i = (i + 1) & (s->cap - 1))
        if (!strcmp(s->slot[i], key)) { ut_free(key); return false; }
    s->slot[i] = key;
    s->len++;
    return true;
}

static void seen_free(seen_set *s) {
    for (size_t i = 0; i < s->cap; i++) ut_free(s->slot[i]);
    ut_free(s->slot);
}

int cli_merge_sarif(int argc, char **argv) {
    const char *out_path = NULL, *v;
    UT_VEC(const char *) inputs = {0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("Usage: xpuify merge-sarif [-o OUT] SHARD.sarif...\n\n"
                   "Joins the SARIF logs of `xpuify check --shard K/N --output sarif=FILE` runs into one (standard\n"
                   "output without -o).\n");
            ut_vec_free(&inputs);
            return 0;
        }
        if (cli_opt(argc, argv, &i, "-o", &v) || cli_opt(argc, argv, &i, "--output", &v)) {
            if (!v) { ut_vec_free(&inputs); return CLI_EXIT_USAGE; }
            out_path = v;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "xpuify: error: unknown option `%s` (see `xpuify merge-sarif --help`)\n", argv[i]);
            ut_vec_free(&inputs);
            return CLI_EXIT_USAGE;
        } else {
            ut_vec_push(&inputs, argv[i]);
        }
    }
    if (!inputs.len) {
        fprintf(stderr, "xpuify: error: merge-sarif needs at least one SARIF file\n");
        ut_vec_free(&inputs);
        return CLI_EXIT_USAGE;
    }
    int rc = CLI_EXIT_USAGE;
    ut_buf err;
    ut_buf_init(&err);
    cJSON *merged = NULL, *mrun = NULL, *mrules = NULL, *mresults = NULL;
    const char *tool = NULL, *version = NULL;
    seen_set seen = {0};
    size_t dropped = 0;
    for (size_t i = 0; i < inputs.len; i++) {
        cJSON *doc = read_json(inputs.items[i], &err);
        if (!doc) goto fail;
        cJSON *runs = cJSON_GetObjectItemCaseSensitive(doc, "runs");
        if (!cJSON_IsArray(runs) || !str_at(doc, "version", NULL, NULL)) {
            ut_buf_printf(&err, "%s: not a SARIF log (no `version` and `runs`)", inputs.items[i]);
            cJSON_Delete(doc);
            goto fail;
        }
        if (!merged) {
            merged = cJSON_CreateObject();
            cJSON_AddStringToObject(merged, "$schema", str_at(doc, "$schema", NULL, NULL) ? str_at(doc, "$schema", NULL, NULL)
                                                                                          : "https://json.schemastore.org/sarif-2.1.0.json");
            cJSON_AddStringToObject(merged, "version", str_at(doc, "version", NULL, NULL));
            cJSON *ra = cJSON_AddArrayToObject(merged, "runs");
            mrun = cJSON_CreateObject();
            cJSON_AddItemToArray(ra, mrun);
        }
        cJSON *run;
        cJSON_ArrayForEach(run, runs) {
            const char *t = str_at(run, "tool", "driver", "name"), *ver = str_at(run, "tool", "driver", "version");
            if (!t) {
                ut_buf_printf(&err, "%s: a run without tool.driver.name", inputs.items[i]);
                cJSON_Delete(doc);
                goto fail;
            }
            if (!tool) {
                /* the first run's tool (rules re-added below) and columnKind */
                cJSON *tl = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(run, "tool"), true);
                cJSON *drv = cJSON_GetObjectItemCaseSensitive(tl, "driver");
                cJSON_DeleteItemFromObjectCaseSensitive(drv, "rules");
                mrules = cJSON_AddArrayToObject(drv, "rules");
                cJSON_AddItemToObject(mrun, "tool", tl);
                /* the bases the results' locations name (%SRCROOT%) */
                cJSON *bases = cJSON_GetObjectItemCaseSensitive(run, "originalUriBaseIds");
                if (cJSON_IsObject(bases)) cJSON_AddItemToObject(mrun, "originalUriBaseIds", cJSON_Duplicate(bases, true));
                cJSON *ck = cJSON_GetObjectItemCaseSensitive(run, "columnKind");
                if (cJSON_IsString(ck)) cJSON_AddStringToObject(mrun, "columnKind", ck->valuestring);
                mresults = cJSON_AddArrayToObject(mrun, "results");
                tool = str_at(mrun, "tool", "driver", "name");
                version = str_at(mrun, "tool", "driver", "version");
            } else if (strcmp(t, tool) || (ver && version && strcmp(ver, version))) {
                ut_buf_printf(&err, "%s: made by %s %s, the first input by %s %s: refusing to merge", inputs.items[i], t,
                              ver ? ver : "?", tool, version ? version : "?");
                cJSON_Delete(doc);
                goto fail;
            }
            /* rules by id; this run's index -> merged index */
            cJSON *rules = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
                                                                cJSON_GetObjectItemCaseSensitive(run, "tool"), "driver"),
                                                            "rules");
            int nr = cJSON_GetArraySize(rules);
            int *map = ut_calloc((size_t)nr + 1, sizeof(int));
            for (int k = 0; k < nr; k++) {
                cJSON *rule = cJSON_GetArrayItem(rules, k);
                const char *id = str_at(rule, "id", NULL, NULL);
                int found = -1, m = cJSON_GetArraySize(mrules);
                for (int q = 0; q < m && found < 0 && id; q++)
                    if (!strcmp(str_at(cJSON_GetArrayItem(mrules, q), "id", NULL, NULL), id)) found = q;
                if (found < 0) {
                    cJSON_AddItemToArray(mrules, cJSON_Duplicate(rule, true));
                    found = m;
                }
                map[k] = found;
            }
            cJSON *res;
            cJSON_ArrayForEach(res, cJSON_GetObjectItemCaseSensitive(run, "results")) {
                cJSON *copy = cJSON_Duplicate(res, true);
                cJSON *ri = cJSON_GetObjectItemCaseSensitive(copy, "ruleIndex");
                if (cJSON_IsNumber(ri) && ri->valueint >= 0 && ri->valueint < nr)
                    cJSON_SetNumberValue(ri, map[ri->valueint]);
                /* the same finding: the same rule and fingerprint (rule, path, normalized line, occurrence); a
                 * result without fingerprints cannot be told from another and is kept */
                cJSON *pf = cJSON_GetObjectItemCaseSensitive(copy, "partialFingerprints");
                const char *rid = str_at(copy, "ruleId", NULL, NULL);
                char *fp = pf && rid ? cJSON_PrintUnformatted(pf) : NULL;
                char *own = NULL;
                if (fp) {
                    ut_buf k;
                    ut_buf_init(&k);
                    ut_buf_printf(&k, "%s\x1f%s", rid, fp);
                    own = ut_buf_take(&k);
                    cJSON_free(fp);
                }
                if (own && !seen_add(&seen, own)) {
                    dropped++;
                    cJSON_Delete(copy);
                    continue;
                }
                cJSON_AddItemToArray(mresults, copy);
            }
            ut_free(map);
        }
        cJSON_Delete(doc);
    }
    if (dropped)
        fprintf(stderr, "xpuify: warning: merge-sarif: %zu result%s already in an earlier input (the same log given "
                "twice, or overlapping shards) dropped\n", dropped, dropped == 1 ? " was" : "s were");
    FILE *out = stdout;
    if (out_path && !(out = fopen(out_path, "w"))) {
        ut_buf_printf(&err, "%s: cannot write: %s", out_path, strerror(errno));
        goto fail;
    }
    char *s = cJSON_Print(merged);
    fprintf(out, "%s\n", s);
    cJSON_free(s);
    rc = fflush(out) == 0 && !ferror(out) ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    if (out != stdout) fclose(out);
    if (rc) fprintf(stderr, "xpuify: error: writing the merged SARIF failed\n");
    goto done;
fail:
    fprintf(stderr, "xpuify: error: merge-sarif: %s\n", err.data);
done:
    seen_free(&seen);
    cJSON_Delete(merged);
    ut_buf_free(&err);
    ut_vec_free(&inputs);
    return rc;
}
