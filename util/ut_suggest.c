/* ut_suggest: "did you mean" for a mistyped verb, option or rule code. The options are read from each verb's
 * help text, so a new option is suggested without being listed twice. */
#include "util/ut_suggest.h"
#include "util/ut_mem.h"
#include <ctype.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* case and look-alikes folded: `XPU2O1` is a typo of `XPU201` */
static int fold(unsigned char c) {
    c = (unsigned char)tolower(c);
    return c == '0' ? 'o' : c == '1' ? 'l' : c;
}

size_t ut_edit_distance(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b);
    /* three rows: the one before the previous is needed for transpositions */
    size_t *r0 = ut_calloc(m + 1, sizeof *r0), *r1 = ut_calloc(m + 1, sizeof *r1), *r2 = ut_calloc(m + 1, sizeof *r2);
    for (size_t j = 0; j <= m; j++) r1[j] = j;
    for (size_t i = 1; i <= n; i++) {
        r2[0] = i;
        for (size_t j = 1; j <= m; j++) {
            int ca = fold((unsigned char)a[i - 1]), cb = fold((unsigned char)b[j - 1]);
            size_t best = r1[j - 1] + (ca != cb);
            if (r1[j] + 1 < best) best = r1[j] + 1;
            if (r2[j - 1] + 1 < best) best = r2[j - 1] + 1;
            if (i > 1 && j > 1 && ca == fold((unsigned char)b[j - 2]) && fold((unsigned char)a[i - 2]) == cb &&
                r0[j - 2] + 1 < best)
                best = r0[j - 2] + 1;
            r2[j] = best;
        }
        size_t *t = r0;
        r0 = r1, r1 = r2, r2 = t;
    }
    size_t d = r1[m];
    ut_free(r0);
    ut_free(r1);
    ut_free(r2);
    return d;
}

const char *ut_suggest(const char *word, const char *const *cands, size_t n) {
    size_t len = strlen(word), limit = len / 3 ? len / 3 : 1, best = limit + 1;
    const char *pick = NULL;
    bool tie = false;
    for (size_t i = 0; i < n; i++) {
        if (!cands[i] || !strcmp(cands[i], word)) continue;
        size_t d = ut_edit_distance(word, cands[i]);
        if (d < best) best = d, pick = cands[i], tie = false;
        else if (d == best && pick && strcmp(pick, cands[i])) tie = true;
    }
    return tie ? NULL : pick;
}

const char *ut_suggest_option(const char *arg, char *buf, size_t sz, const char *help, ...) {
    char word[128];
    snprintf(word, sizeof word, "%s", arg);
    char *eq = strchr(word, '=');
    if (eq) *eq = 0;
    if (strncmp(word, "--", 2)) return NULL;
    /* every `--name` the help texts mention */
    const char *opts[512];
    char store[8192];
    size_t n = 0, used = 0;
    va_list ap;
    va_start(ap, help);
    for (const char *h = help; h; h = va_arg(ap, const char *)) {
        for (const char *p = strstr(h, "--"); p && n < 512; p = strstr(p, "--")) {
            const char *q = p + 2;
            while (*q && (isalnum((unsigned char)*q) || *q == '-')) q++;
            size_t k = (size_t)(q - p);
            if (k > 2 && used + k + 1 <= sizeof store) {
                memcpy(store + used, p, k);
                store[used + k] = 0;
                opts[n++] = store + used;
                used += k + 1;
            }
            p = q;
        }
    }
    va_end(ap);
    const char *s = ut_suggest(word, opts, n);
    if (!s) return NULL;
    snprintf(buf, sz, "%s", s);
    return buf;
}
