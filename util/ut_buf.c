/* ut_buf: growable buffer; always NUL-terminated after any append. */
#include "util/ut_buf.h"
#include "util/ut_mem.h"
#include <stdio.h>

void ut_buf_init(ut_buf *b) { b->data = NULL, b->len = b->cap = 0; }
void ut_buf_free(ut_buf *b) { ut_free(b->data); ut_buf_init(b); }
void ut_buf_clear(ut_buf *b) { b->len = 0; if (b->data) b->data[0] = 0; }

void ut_buf_grow(ut_buf *b, size_t extra) {
    if (b->len + extra + 1 <= b->cap) return;
    size_t nc = b->cap ? b->cap * 2 : 64;
    while (nc < b->len + extra + 1) nc *= 2;
    b->data = ut_realloc(b->data, nc);
    b->cap = nc;
}


void ut_buf_vprintf(ut_buf *b, const char *fmt, va_list ap) {
    /* one pass where the text fits the room the buffer has (the common case: a buffer reused or grown before),
     * else a second one into room made for it */
    va_list ap2;
    va_copy(ap2, ap);
    size_t room = b->cap > b->len ? b->cap - b->len : 0;
    int n = vsnprintf(room ? b->data + b->len : NULL, room, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        if (room) b->data[b->len] = 0;
        return;
    }
    if ((size_t)n >= room) {
        ut_buf_grow(b, (size_t)n);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    }
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
