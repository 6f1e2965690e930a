/* ut_buf: a growable byte/string buffer with printf-style appends and JSON/XML-free escaping helpers. */
#ifndef UT_BUF_H
#define UT_BUF_H
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

typedef struct {
    char *data;
    size_t len, cap;
} ut_buf;

void ut_buf_init(ut_buf *b);
void ut_buf_free(ut_buf *b);
void ut_buf_clear(ut_buf *b);
/* Room for extra more bytes and the NUL (the slow path of the appends below). */
void ut_buf_grow(ut_buf *b, size_t extra);
/* The appends are inline: report writers call them a dozen times per finding (a JSON report of 56,000 findings
 * made 1.5 million calls), and the common case is a copy into room the buffer has. */
static inline void ut_buf_append(ut_buf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) ut_buf_grow(b, n);
    if (n) memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}
static inline void ut_buf_puts(ut_buf *b, const char *s) { ut_buf_append(b, s, strlen(s)); }
static inline void ut_buf_putc(ut_buf *b, char c) {
    if (b->len + 2 > b->cap) ut_buf_grow(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = 0;
}
void ut_buf_printf(ut_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ut_buf_vprintf(ut_buf *b, const char *fmt, va_list ap);
/* Returns the heap string and leaves the buffer empty. */
char *ut_buf_take(ut_buf *b);
#endif
