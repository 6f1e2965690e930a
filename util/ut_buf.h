/* ut_buf: a growable byte/string buffer with printf-style appends and JSON/XML-free escaping helpers. */
#ifndef UT_BUF_H
#define UT_BUF_H
#include <stdarg.h>
#include <stddef.h>

typedef struct {
    char *data;
    size_t len, cap;
} ut_buf;

void ut_buf_init(ut_buf *b);
void ut_buf_free(ut_buf *b);
void ut_buf_clear(ut_buf *b);
void ut_buf_append(ut_buf *b, const char *s, size_t n);
void ut_buf_puts(ut_buf *b, const char *s);
void ut_buf_putc(ut_buf *b, char c);
void ut_buf_printf(ut_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ut_buf_vprintf(ut_buf *b, const char *fmt, va_list ap);
/* Returns the heap string and leaves the buffer empty. */
char *ut_buf_take(ut_buf *b);
#endif
