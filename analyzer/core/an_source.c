/* an_source: loading, validating and indexing one input file. */
#include "analyzer/core/an_source.h"
#include "analyzer/core/an_encoding.h"
#include "util/ut_buf.h"
#include "util/ut_mem.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* bytes [i, n) from i on: where the first one >= 0x80 is (n when none), eight at a time */
static size_t ascii_run(const unsigned char *s, size_t i, size_t n) {
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if (w & 0x8080808080808080ull) break;
    }
    while (i < n && s[i] < 0x80) i++;
    return i;
}

long an_utf8_invalid_at(const char *str, size_t n) {
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) { i = ascii_run(s, i, n); continue; }
        size_t need;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) need = 1, cp = c & 0x1F;
        else if (c >= 0xE0 && c <= 0xEF) need = 2, cp = c & 0x0F;
        else if (c >= 0xF0 && c <= 0xF4) need = 3, cp = c & 0x07;
        else return (long)i;
        if (i + need >= n) return (long)i; /* truncated sequence */
        for (size_t k = 1; k <= need; k++) {
            if (i + k >= n || (s[i + k] & 0xC0) != 0x80) return (long)i;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((need == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (need == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            return (long)i;
        i += need + 1;
    }
    return -1;
}

/* the bytes of s[0, n) that start a code point (all but UTF-8's continuation bytes, 0x80-0xBF): sixteen at a time
 * where SSE2 is there (as signed bytes those are -128..-65) */
static uint32_t starts_in(const unsigned char *s, uint32_t n) {
    uint32_t c = 0, i = 0;
#if defined(__SSE2__)
    const __m128i cont_max = _mm_set1_epi8(-65), zero = _mm_setzero_si128();
    while (i + 16 <= n) {
        /* each lane counts its bytes (a true comparison is -1) for at most 255 steps, then the lanes are summed */
        __m128i acc = zero;
        for (int k = 0; k < 255 && i + 16 <= n; k++, i += 16)
            acc = _mm_sub_epi8(acc, _mm_cmpgt_epi8(_mm_loadu_si128((const __m128i *)(s + i)), cont_max));
        __m128i sum = _mm_sad_epu8(acc, zero);
        c += (uint32_t)_mm_cvtsi128_si32(sum) + (uint32_t)_mm_extract_epi16(sum, 4);
    }
#endif
    for (; i < n; i++) c += (s[i] & 0xC0) != 0x80;
    return c;
}

/* Code points before each AN_SOURCE_MARK-byte block of a text that is not all ASCII, so that a column on a long line
 * is counted from the nearest mark, not from the line's start: a 1 MB line with 40,000 findings and one non-ASCII
 * character anywhere in the file took 18 s, counting the line up to each finding. */
static void index_marks(an_source *src) {
    ut_free(src->cp_marks);
    src->cp_marks = NULL;
    if (src->ascii) return;
    uint32_t n = src->len / AN_SOURCE_MARK + 1, cps = 0;
    src->cp_marks = ut_malloc(n * sizeof(uint32_t));
    for (uint32_t k = 0, i = 0; k < n; k++) {
        src->cp_marks[k] = cps;
        uint32_t e = i + AN_SOURCE_MARK < src->len ? i + AN_SOURCE_MARK : src->len;
        cps += starts_in((const unsigned char *)src->text + i, e - i);
        i = e;
    }
}

/* code points in text[0, byte) */
static uint32_t cps_before(const an_source *src, uint32_t byte) {
    uint32_t k = byte / AN_SOURCE_MARK;
    return src->cp_marks[k] + starts_in((const unsigned char *)src->text + k * AN_SOURCE_MARK, byte - k * AN_SOURCE_MARK);
}

/* Line starts: after each "\n", "\r\n" or lone "\r". Text without a "\r" (nearly all) is split with memchr. */
static void index_lines(an_source *src) {
    uint32_t cap = 64, n = 0;
    ut_free(src->line_starts);
    src->line_starts = ut_malloc(cap * sizeof(uint32_t));
    src->line_starts[n++] = 0;
    const char *t = src->text;
    if (!memchr(t, '\r', src->len)) {
        for (const char *p = t, *e = t + src->len; (p = memchr(p, '\n', (size_t)(e - p))); p++) {
            if (n == cap) cap *= 2, src->line_starts = ut_realloc(src->line_starts, cap * sizeof(uint32_t));
            src->line_starts[n++] = (uint32_t)(p - t) + 1;
        }
    } else {
        for (uint32_t i = 0; i < src->len; i++) {
            if (t[i] == '\n' || (t[i] == '\r' && !(i + 1 < src->len && t[i + 1] == '\n'))) {
                if (n == cap) cap *= 2, src->line_starts = ut_realloc(src->line_starts, cap * sizeof(uint32_t));
                src->line_starts[n++] = i + 1;
            }
        }
    }
    src->nlines = n;
    src->ascii = ascii_run((const unsigned char *)t, 0, src->len) == src->len;
    src->body = (src->len >= 3 && (unsigned char)src->text[0] == 0xEF && (unsigned char)src->text[1] == 0xBB &&
                 (unsigned char)src->text[2] == 0xBF)
                    ? 3
                    : 0;
    index_marks(src);
}

void an_source_index(an_source *src) { index_lines(src); }

void an_source_init_mem(an_source *src, const char *path, const char *text, size_t len) {
    memset(src, 0, sizeof *src);
    src->path = ut_strdup(path);
    src->text = ut_strndup(text, len);
    src->len = (uint32_t)len;
    index_lines(src);
}

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

void an_stamp_of(const struct stat *st, an_stamp *out) {
    out->dev = (uint64_t)st->st_dev;
    out->ino = (uint64_t)st->st_ino;
    out->size = (uint64_t)st->st_size;
    out->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
    out->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
    out->valid = true;
}

bool an_stamp_eq(const an_stamp *a, const an_stamp *b) {
    return a->valid && b->valid && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

an_load_status an_source_load(an_source *src, const char *path, size_t max_size, char **why) {
    an_stamp seen;
    return an_source_load_stamped(src, path, max_size, why, &seen);
}

an_load_status an_source_load_stamped(an_source *src, const char *path, size_t max_size, char **why, an_stamp *seen) {
    an_load_status st = an_source_read_stamped(src, path, max_size, why, seen);
    if (st == AN_LOAD_OK) index_lines(src);
    return st;
}

an_load_status an_source_read_stamped(an_source *src, const char *path, size_t max_size, char **why, an_stamp *seen) {
    memset(src, 0, sizeof *src);
    *why = NULL;
    seen->valid = false;
    /* O_NONBLOCK: opening a FIFO (or a device) must not wait for a writer; what was opened is tested by fstat, so a
     * file swapped for something else after a stat is caught too */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) { *why = fmt("cannot open: %s", strerror(errno)); return AN_LOAD_UNREADABLE; }
    struct stat st;
    if (fstat(fd, &st) != 0) { *why = fmt("cannot stat: %s", strerror(errno)); close(fd); return AN_LOAD_UNREADABLE; }
    if (!S_ISREG(st.st_mode)) {
        *why = fmt("not a regular file (%s)", S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO"
                   : S_ISSOCK(st.st_mode) ? "a socket" : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : "special");
        close(fd);
        return AN_LOAD_NOT_REGULAR;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    if ((uint64_t)st.st_size > max_size || (uint64_t)st.st_size >= UINT32_MAX) {
        *why = fmt("file is %lld bytes, over the %zu-byte limit (--max-file-size)", (long long)st.st_size, max_size);
        close(fd);
        return AN_LOAD_TOO_LARGE;
    }
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = ut_malloc(cap);
    for (;;) {
        if (n + 1 >= cap) {
            if (cap > max_size) { free(buf); close(fd); *why = fmt("file grew over the %zu-byte limit while read", max_size); return AN_LOAD_TOO_LARGE; }
            cap *= 2, buf = ut_realloc(buf, cap);
        }
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0) {
            if (errno == EINTR) continue;
            *why = fmt("read failed: %s", strerror(errno));
            free(buf);
            close(fd);
            return AN_LOAD_UNREADABLE;
        }
        if (r == 0) break;
        n += (size_t)r;
        if (n == (size_t)st.st_size && n) break; /* all fstat announced: spare the read that would return 0 */
    }
    close(fd);
    buf[n] = 0;
    if (n == (size_t)st.st_size) an_stamp_of(&st, seen);
    if (memchr(buf, 0, n)) {
        *why = fmt("binary file (contains NUL bytes)");
        free(buf);
        return AN_LOAD_BINARY;
    }
    /* PEP 263: a coding cookie other than UTF-8's is decoded, as Python reads the file */
    char enc[64];
    if (an_encoding_cookie(buf, n, enc, sizeof enc)) {
        size_t dn = 0;
        char *dec = an_encoding_decode(enc, buf, n, &dn, why);
        free(buf);
        if (!dec) return AN_LOAD_NOT_UTF8;
        if (dn >= UINT32_MAX) {
            ut_free(dec);
            *why = fmt("decoded from %s it is over 4 GB", enc);
            return AN_LOAD_TOO_LARGE;
        }
        buf = dec, n = dn;
        src->encoding = ut_strdup(enc);
    }
    long bad = an_utf8_invalid_at(buf, n);
    if (bad >= 0) {
        uint32_t line = 1, col = 1;
        for (long i = 0; i < bad; i++) {
            if (buf[i] == '\n') line++, col = 1;
            else if (((unsigned char)buf[i] & 0xC0) != 0x80) col++;
        }
        *why = fmt("not valid UTF-8 (first bad byte 0x%02x at line %u, column %u)", (unsigned char)buf[bad], line, col);
        free(buf);
        return AN_LOAD_NOT_UTF8;
    }
    src->path = ut_strdup(path);
    src->text = buf;
    src->len = (uint32_t)n;
    return AN_LOAD_OK;
}

void an_source_free(an_source *src) {
    ut_free(src->path);
    ut_free(src->text);
    ut_free(src->line_starts);
    ut_free(src->cp_marks);
    ut_free(src->encoding);
    memset(src, 0, sizeof *src);
}

static uint32_t line_index(const an_source *src, uint32_t byte) {
    uint32_t lo = 0, hi = src->nlines;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (src->line_starts[mid] <= byte) lo = mid;
        else hi = mid;
    }
    return lo;
}

void an_source_position(const an_source *src, uint32_t byte, uint32_t *line, uint32_t *col) {
    if (byte > src->len) byte = src->len;
    uint32_t li = line_index(src, byte);
    uint32_t start = src->line_starts[li];
    if (li == 0) start = src->body > byte ? byte : src->body; /* a BOM is not a column */
    uint32_t c = 1;
    if (src->ascii) c += byte - start;
    else c += cps_before(src, byte) - cps_before(src, start);
    *line = li + 1;
    *col = c;
}

void an_source_line_span(const an_source *src, uint32_t line, uint32_t *start, uint32_t *end) {
    if (line < 1) line = 1;
    if (line > src->nlines) line = src->nlines;
    uint32_t s = src->line_starts[line - 1];
    if (line == 1) s = src->body;
    uint32_t e = line < src->nlines ? src->line_starts[line] : src->len;
    while (e > s && (src->text[e - 1] == '\n' || src->text[e - 1] == '\r')) e--;
    *start = s;
    *end = e;
}
