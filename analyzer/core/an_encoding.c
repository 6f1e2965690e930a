/* an_encoding: the coding cookie (PEP 263's regular expression `^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)`, on line 1,
 * or on line 2 when line 1 is blank or a comment, as CPython's tokenizer does) and decoding with iconv. Names are
 * normalized the way Python's codec lookup does (case, `_` and `-`, aliases such as latin-1 and l1). */
#include "analyzer/core/an_encoding.h"
#include "util/ut_buf.h"
#include "util/ut_mem.h"
#include <ctype.h>
#include <errno.h>
#include <iconv.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* the cookie of one line [p, e), or false */
static bool line_cookie(const char *p, const char *e, char *name, size_t namesz) {
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\f')) p++;
    if (p >= e || *p != '#') return false;
    for (const char *q = p; q + 7 <= e; q++) {
        if (memcmp(q, "coding", 6) || (q[6] != ':' && q[6] != '=')) continue;
        const char *v = q + 7;
        while (v < e && (*v == ' ' || *v == '\t')) v++;
        size_t k = 0;
        while (v < e && (isalnum((unsigned char)*v) || *v == '-' || *v == '_' || *v == '.') && k + 1 < namesz)
            name[k++] = *v++;
        name[k] = 0;
        return k > 0;
    }
    return false;
}

static bool blank_or_comment(const char *p, const char *e) {
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\f' || *p == '\r')) p++;
    return p >= e || *p == '#';
}

/* Python's normalization and the aliases its codecs know, mapped to iconv's names */
static void normalize(char *name) {
    char n[64];
    size_t k = 0;
    for (const char *s = name; *s && k + 1 < sizeof n; s++) n[k++] = *s == '_' ? '-' : (char)tolower((unsigned char)*s);
    n[k] = 0;
    static const char *const alias[][2] = {
        {"latin-1", "ISO-8859-1"}, {"latin1", "ISO-8859-1"}, {"l1", "ISO-8859-1"}, {"iso-latin-1", "ISO-8859-1"},
        {"iso8859-1", "ISO-8859-1"}, {"8859", "ISO-8859-1"}, {"cp819", "ISO-8859-1"}, {"latin", "ISO-8859-1"},
        {"windows-1252", "CP1252"}, {"cp1252", "CP1252"}, {"ascii", "ASCII"}, {"us-ascii", "ASCII"},
        {"646", "ASCII"}, {"euc-jp", "EUC-JP"}, {"shift-jis", "SHIFT_JIS"}, {"sjis", "SHIFT_JIS"},
        {"cp932", "CP932"}, {"gbk", "GBK"}, {"gb2312", "GB2312"}, {"gb18030", "GB18030"}, {"big5", "BIG5"},
        {"koi8-r", "KOI8-R"}, {"koi8-u", "KOI8-U"}, {"cp1251", "CP1251"}, {"windows-1251", "CP1251"},
        {"cp1250", "CP1250"}, {"windows-1250", "CP1250"}, {"euc-kr", "EUC-KR"}, {"mac-roman", "MACINTOSH"},
        {"macroman", "MACINTOSH"}};
    for (size_t i = 0; i < sizeof alias / sizeof *alias; i++)
        if (!strcmp(n, alias[i][0])) { strcpy(name, alias[i][1]); return; }
    /* iso-8859-N, iso8859-N, iso-8859-N-variants; cpNNN */
    if (!strncmp(n, "iso-8859-", 9) || !strncmp(n, "iso8859-", 8)) {
        snprintf(name, 64, "ISO-8859-%s", n + (n[3] == '-' ? 9 : 8));
        return;
    }
    for (char *s = n; *s; s++) *s = (char)toupper((unsigned char)*s);
    strcpy(name, n);
}

static bool is_utf8(const char *name) {
    char n[64];
    size_t k = 0;
    for (const char *s = name; *s && k + 1 < sizeof n; s++) n[k++] = *s == '_' ? '-' : (char)tolower((unsigned char)*s);
    n[k] = 0;
    /* Python: utf-8, utf8, utf-8-sig, and any name that starts with utf-8- (utf-8-unix, utf-8-dos, Emacs style) */
    return !strcmp(n, "utf8") || !strcmp(n, "utf-8") || !strncmp(n, "utf-8-", 6) || !strncmp(n, "utf8-", 5);
}

bool an_encoding_cookie(const char *buf, size_t n, char *name, size_t namesz) {
    if (n >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3)) return false;
    const char *e = buf + n, *l1e = memchr(buf, '\n', n);
    if (!l1e) l1e = e;
    char tmp[64];
    bool found = line_cookie(buf, l1e, tmp, sizeof tmp);
    if (!found && l1e < e && blank_or_comment(buf, l1e)) {
        const char *l2 = l1e + 1, *l2e = memchr(l2, '\n', (size_t)(e - l2));
        found = line_cookie(l2, l2e ? l2e : e, tmp, sizeof tmp);
    }
    if (!found || is_utf8(tmp)) return false;
    normalize(tmp);
    snprintf(name, namesz, "%s", tmp);
    return true;
}

char *an_encoding_decode(const char *enc, const char *buf, size_t n, size_t *outn, char **why) {
    *why = NULL;
    iconv_t cd = iconv_open("UTF-8", enc);
    if (cd == (iconv_t)-1) {
        ut_buf b;
        ut_buf_init(&b);
        ut_buf_printf(&b, "declares the encoding `%s` (coding cookie), which this system cannot decode", enc);
        *why = ut_buf_take(&b);
        return NULL;
    }
    size_t cap = n * 4 + 16;
    char *out = ut_malloc(cap), *op = out;
    char *ip = (char *)buf;
    size_t il = n, ol = cap - 1;
    if (iconv(cd, &ip, &il, &op, &ol) == (size_t)-1) {
        ut_buf b;
        ut_buf_init(&b);
        size_t at = (size_t)(ip - buf);
        uint32_t line = 1;
        for (size_t i = 0; i < at; i++) line += buf[i] == '\n';
        ut_buf_printf(&b, "not valid %s, the encoding its coding cookie declares (byte 0x%02x at line %u)", enc,
                      at < n ? (unsigned char)buf[at] : 0, line);
        *why = ut_buf_take(&b);
        ut_free(out);
        iconv_close(cd);
        return NULL;
    }
    iconv_close(cd);
    *op = 0;
    *outn = (size_t)(op - out);
    return out;
}
