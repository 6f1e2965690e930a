/* ut_buf: growable buffer; always NUL-terminated after any append. */
#include "util/ut_buf.h"
#include "util/ut_mem.h"
#include <stdio.h>

void ut_buf_init(ut_buf *b) { b->data = NULL, b->len = b->cap = 0; }
void ut_buf_free(ut_buf *b) { ut_free(b->data); ut_buf_init(b); }
void ut_buf_clear(ut_buf *b) { b->len = 0; if (b->data) b->data[0] = 0; }

static void grow(ut_buf *b, size_t extra) {
    if (b->len + extra + 1 <= b->cap) return;
    size_t nc = b->cap ? b->cap * 2 : 64;
    while (nc < b->len + extra + 1) nc *= 2;
    b->data = ut_realloc(b->data, nc);
    b->cap = nc;
}

void ut_buf_append(ut_buf *b, const char *s, size_t n) {
    grow(b, n);
    if (n) memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void ut_buf_puts(ut_buf *b, const char *s) { ut_buf_append(b, s, strlen(s)); }
void ut_buf_putc(ut_buf *b, char c) {
    if (b->len + 2 > b->cap) grow(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = 0;
}

void ut_buf_vprintf(ut_buf *b, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) return;
    grow(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void ut_buf_printf(ut_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ut_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

char *ut_buf_take(ut_buf *b) {
    if (!b->data) return ut_strdup("");
    char *s = b->data;
    ut_buf_init(b);
    return s;
}
