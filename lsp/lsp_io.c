/* lsp_io: Content-Length framing, reading robustly and writing whole messages. */
#include "lsp/lsp_io.h"
#include "util/ut_buf.h"
#include "util/ut_mem.h"
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

#define HEADER_MAX 16384

void lsp_reader_init(lsp_reader *r, int fd, size_t max_message) {
    memset(r, 0, sizeof *r);
    r->fd = fd;
    r->max_message = max_message;
}

void lsp_reader_free(lsp_reader *r) {
    ut_free(r->buf);
    memset(r, 0, sizeof *r);
}

static void reserve(lsp_reader *r, size_t n) {
    if (r->len + n + 1 <= r->cap) return;
    size_t c = r->cap ? r->cap : 65536;
    while (c < r->len + n + 1) c *= 2;
    r->buf = ut_realloc(r->buf, c);
    r->cap = c;
}

static void drop(lsp_reader *r, size_t n) {
    if (n >= r->len) { r->len = 0; return; }
    memmove(r->buf, r->buf + n, r->len - n);
    r->len -= n;
}

long lsp_reader_fill(lsp_reader *r) {
    size_t chunk = 65536;
    if (r->want && r->hdr + r->want > r->len) {
        size_t missing = r->hdr + r->want - r->len;
        chunk = missing > (4u << 20) ? (4u << 20) : missing > chunk ? missing : chunk;
    }
    reserve(r, chunk);
    for (;;) {
        ssize_t n = read(r->fd, r->buf + r->len, chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) r->eof = true;
        r->len += (size_t)n;
        r->buf[r->len] = 0;
        return (long)n;
    }
}

void lsp_reader_push(lsp_reader *r, const char *data, size_t n) {
    reserve(r, n);
    if (n) memcpy(r->buf + r->len, data, n);
    r->len += n;
    r->buf[r->len] = 0;
}

bool lsp_reader_waiting(const lsp_reader *r) { return r->want > 0 || (r->hdr > 0); }

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

static const char *find_ci(const char *s, size_t n, const char *w) {
    size_t wl = strlen(w);
    for (size_t i = 0; i + wl <= n; i++)
        if (!strncasecmp(s + i, w, wl)) return s + i;
    return NULL;
}

/* Drops bytes up to the next `Content-Length:` after offset from (everything but a possible partial one when
 * there is none). Returns the number of bytes dropped. */
static size_t resync(lsp_reader *r, size_t from) {
    static const char key[] = "content-length:";
    const char *h = from < r->len ? find_ci(r->buf + from, r->len - from, key) : NULL;
    size_t n;
    if (h) {
        n = (size_t)(h - r->buf);
    } else {
        /* keep a tail that may be the start of the next header */
        size_t keep = 0;
        for (size_t k = sizeof key - 2; k > 0 && !keep; k--)
            if (k <= r->len && r->len - k >= from && !strncasecmp(r->buf + r->len - k, key, k)) keep = k;
        n = r->len - keep;
    }
    drop(r, n);
    r->want = r->hdr = 0;
    return n;
}

static bool name_char(char c) { return isalnum((unsigned char)c) || c == '-' || c == '_'; }

lsp_read_result lsp_reader_next(lsp_reader *r, char **body, size_t *len, char **problem) {
    *body = NULL, *problem = NULL, *len = 0;
    if (r->skip) {
        size_t n = r->skip < r->len ? r->skip : r->len;
        drop(r, n);
        r->skip -= n;
        if (r->skip) return LSP_MORE;
    }
    if (r->hdr) { /* in a body */
        if (r->len < r->hdr + r->want) return LSP_MORE;
        *body = ut_strndup(r->buf + r->hdr, r->want);
        *len = r->want;
        drop(r, r->hdr + r->want);
        r->want = r->hdr = 0;
        return LSP_MESSAGE;
    }
    /* blank lines between messages are harmless */
    size_t lead = 0;
    while (lead < r->len && (r->buf[lead] == '\r' || r->buf[lead] == '\n' || r->buf[lead] == ' ' || r->buf[lead] == '\t')) lead++;
    drop(r, lead);
    if (!r->len) return LSP_MORE;
    /* a header line starts with a name and a colon */
    size_t i = 0;
    while (i < r->len && name_char(r->buf[i])) i++;
    if (i == r->len) {
        if (i < 64) return LSP_MORE;
    } else if (i == 0 || r->buf[i] != ':') {
        size_t n = resync(r, 1);
        *problem = fmt("skipped %zu bytes that are not a message header", n);
        return LSP_PROBLEM;
    }
    const char *end = NULL;
    size_t term = 0;
    for (size_t k = 0; k + 1 < r->len && k < HEADER_MAX; k++) {
        if (r->buf[k] == '\n' && r->buf[k + 1] == '\n') { end = r->buf + k, term = 2; break; }
        if (k + 3 < r->len && !memcmp(r->buf + k, "\r\n\r\n", 4)) { end = r->buf + k, term = 4; break; }
    }
    if (!end) {
        if (r->len < HEADER_MAX) return LSP_MORE;
        size_t n = resync(r, 1);
        *problem = fmt("skipped %zu bytes: a header block longer than %d bytes", n, HEADER_MAX);
        return LSP_PROBLEM;
    }
    size_t hlen = (size_t)(end - r->buf) + term;
    long long length = -1;
    for (const char *line = r->buf; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *le = nl ? nl : end;
        const char *e = le;
        if (e > line && e[-1] == '\r') e--;
        if (e == line) { line = le + 1; continue; }
        const char *c = line;
        while (c < e && name_char(*c)) c++;
        if (c == line || c == e || *c != ':') {
            size_t n = resync(r, (size_t)(line - r->buf) + 1);
            *problem = fmt("skipped %zu bytes: a malformed header line", n);
            return LSP_PROBLEM;
        }
        if ((size_t)(c - line) == 14 && !strncasecmp(line, "Content-Length", 14)) {
            const char *v = c + 1;
            while (v < e && (*v == ' ' || *v == '\t')) v++;
            const char *ve = e;
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t')) ve--;
            long long x = 0;
            bool ok = ve > v && ve - v <= 15;
            for (const char *d = v; d < ve && ok; d++) {
                if (!isdigit((unsigned char)*d)) ok = false;
                else x = x * 10 + (*d - '0');
            }
            if (!ok) {
                *problem = fmt("skipped a message whose Content-Length `%.*s` is not a byte count", (int)(ve - v > 40 ? 40 : ve - v), v);
                drop(r, hlen);
                return LSP_PROBLEM;
            }
            length = x;
        }
        line = le + 1;
    }
    if (length < 0) {
        drop(r, hlen);
        *problem = fmt("skipped a header block without Content-Length");
        return LSP_PROBLEM;
    }
    if ((unsigned long long)length > r->max_message) {
        drop(r, hlen);
        r->skip = (size_t)length;
        *problem = fmt("skipped a message of %lld bytes, over the %zu-byte limit", length, r->max_message);
        return LSP_PROBLEM;
    }
    r->hdr = hlen;
    r->want = (size_t)length;
    reserve(r, r->hdr + r->want - (r->len < r->hdr + r->want ? r->len : r->hdr + r->want));
    return lsp_reader_next(r, body, len, problem);
}

lsp_read_result lsp_reader_salvage(lsp_reader *r, char **body, size_t *len, char **problem) {
    *body = NULL, *problem = NULL, *len = 0;
    if (!r->hdr || r->len <= r->hdr) return LSP_MORE;
    const char *start = r->buf + r->hdr, *end = NULL;
    size_t have = r->len - r->hdr;
    cJSON *v = cJSON_ParseWithLengthOpts(start, have, &end, false);
    if (v) {
        cJSON_Delete(v);
        size_t n = (size_t)(end - start);
        *body = ut_strndup(start, n);
        *len = n;
        *problem = fmt("a message said Content-Length %zu but ended after %zu bytes", r->want, n);
        drop(r, r->hdr + n);
        r->want = r->hdr = 0;
        return LSP_MESSAGE;
    }
    const char *h = find_ci(start, have, "content-length:");
    if (!h) return LSP_MORE;
    size_t n = resync(r, r->hdr);
    *problem = fmt("skipped %zu bytes of a message shorter than its Content-Length", n);
    return LSP_PROBLEM;
}

void lsp_reader_unread(lsp_reader *r, const char *data, size_t n) {
    reserve(r, n);
    memmove(r->buf + n, r->buf, r->len);
    memcpy(r->buf, data, n);
    r->len += n;
    r->buf[r->len] = 0;
}

bool lsp_write_message(int fd, const char *json, size_t len) {
    char head[64];
    int hl = snprintf(head, sizeof head, "Content-Length: %zu\r\n\r\n", len);
    struct iovec iov[2] = {{head, (size_t)hl}, {(void *)json, len}};
    int idx = 0;
    while (idx < 2) {
        ssize_t n = writev(fd, iov + idx, 2 - idx);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        size_t k = (size_t)n;
        while (idx < 2 && k >= iov[idx].iov_len) k -= iov[idx++].iov_len;
        if (idx < 2) iov[idx].iov_base = (char *)iov[idx].iov_base + k, iov[idx].iov_len -= k;
    }
    return true;
}
