/* an_pynest: the bracket-nesting bound checked before Python is parsed (see an_pynest.h). */
#include "analyzer/python/an_pynest.h"
#include "util/ut_buf.h"
#include <string.h>

static bool ident_char(unsigned char c) { return c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z') || c >= 0x80; }

/* Whether the quote at q opens an f-string: its prefix (up to two letters of r, b, u, f, standing alone) has an f. */
static bool f_prefix(const char *text, size_t q) {
    size_t s = q;
    while (s > 0 && q - s < 3 && ident_char((unsigned char)text[s - 1])) s--;
    if (q - s > 2 || (s > 0 && ident_char((unsigned char)text[s - 1]))) return false;
    bool f = false;
    for (size_t i = s; i < q; i++) {
        char c = (char)(text[i] | 32);
        if (!strchr("rbuf", c)) return false;
        f |= c == 'f';
    }
    return f;
}

/* The end of the string whose opening quote is at q (just past its closing quote), or 0 when it is unterminated. */
static size_t string_end(const char *text, size_t len, size_t q) {
    char quote = text[q];
    bool triple = q + 2 < len && text[q + 1] == quote && text[q + 2] == quote;
    for (size_t i = q + (triple ? 3 : 1); i < len; i++) {
        if (text[i] == '\\') { i++; continue; }
        if (!triple && text[i] == '\n') return 0;
        if (text[i] != quote) continue;
        if (!triple) return i + 1;
        if (i + 2 < len && text[i + 1] == quote && text[i + 2] == quote) return i + 3;
    }
    return 0;
}

/* One byte of code: false when it opens a bracket past the limit. */
static bool step(char c, uint32_t *depth, uint32_t limit) {
    if (c == '(' || c == '[' || c == '{') return ++*depth <= limit;
    if ((c == ')' || c == ']' || c == '}') && *depth) --*depth;
    return true;
}

/* the bytes the scan acts on: comments, quotes, brackets */
static const bool special[256] = {['#'] = 1, ['\''] = 1, ['"'] = 1, ['('] = 1, ['['] = 1, ['{'] = 1, [')'] = 1, [']'] = 1, ['}'] = 1};

bool an_py_nesting_over(const char *text, size_t len, uint32_t limit, size_t *at) {
    uint32_t depth = 0;
    for (size_t i = 0; i < len; i++) {
        while (i < len && !special[(unsigned char)text[i]]) i++; /* most bytes: nothing to do */
        if (i >= len) break;
        char c = text[i];
        if (c == '#') {
            const char *nl = memchr(text + i, '\n', len - i);
            if (!nl) break;
            i = (size_t)(nl - text);
            continue;
        }
        if (c == '\'' || c == '"') {
            size_t e = string_end(text, len, i);
            if (e) { /* an unterminated string is scanned as code */
                /* an f-string's replacement fields are code: every bracket in it counts (its text's too: more) */
                if (f_prefix(text, i))
                    for (size_t k = i + 1; k + 1 < e; k++)
                        if (!step(text[k], &depth, limit)) {
                            if (at) *at = k;
                            return true;
                        }
                i = e - 1;
                continue;
            }
        }
        if (!step(c, &depth, limit)) {
            if (at) *at = i;
            return true;
        }
    }
    return false;
}

char *an_py_nesting_why(const an_source *src) {
    size_t at;
    if (!an_py_nesting_over(src->text, src->len, AN_PY_MAX_NESTING, &at)) return NULL;
    uint32_t line, col;
    an_source_position(src, (uint32_t)at, &line, &col);
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_printf(&b, "brackets nested more than %d deep at line %u (CPython allows 200); not analyzed",
                  AN_PY_MAX_NESTING, line);
    return ut_buf_take(&b);
}
