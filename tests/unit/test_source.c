/* Unit tests for an_source: UTF-8 validation, line table, positions in code points (BOM, CRLF, multibyte). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "analyzer/core/an_source.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void utf8(void **s) {
    (void)s;
    assert_int_equal(an_utf8_invalid_at("abc", 3), -1);
    assert_int_equal(an_utf8_invalid_at("\xc3\xa9t\xc3\xa9", 5), -1);
    assert_int_equal(an_utf8_invalid_at("ab\xff", 3), 2);
    assert_int_equal(an_utf8_invalid_at("a\xc3", 2), 1);           /* truncated */
    assert_int_equal(an_utf8_invalid_at("\xed\xa0\x80", 3), 0);    /* surrogate */
    assert_int_equal(an_utf8_invalid_at("\xc0\xaf", 2), 0);        /* overlong */
    assert_int_equal(an_utf8_invalid_at("\xf0\x9f\x98\x80", 4), -1);
}

static void positions(void **s) {
    (void)s;
    an_source src;
    const char *t = "\xef\xbb\xbfx = 1\r\n\xc3\xa9\xc3\xa9 = y.cuda()\n";
    an_source_init_mem(&src, "p.py", t, strlen(t));
    uint32_t l, c;
    an_source_position(&src, 3, &l, &c); /* after the BOM */
    assert_int_equal(l, 1);
    assert_int_equal(c, 1);
    const char *cuda = strstr(t, "cuda");
    an_source_position(&src, (uint32_t)(cuda - t), &l, &c);
    assert_int_equal(l, 2);
    assert_int_equal(c, 8); /* two 2-byte code points count as two columns */
    uint32_t a, b;
    an_source_line_span(&src, 1, &a, &b);
    assert_int_equal(a, 3);
    assert_int_equal(b, 8); /* without \r\n */
    an_source_free(&src);
}

/* Columns on long lines of a text that is not all ASCII are counted from the code-point marks (one per 1 KiB block):
 * every position of a line of 5,000 bytes that mixes 1-, 2-, 3- and 4-byte sequences, across block boundaries and
 * on a second line that starts inside a block, agrees with a count from the line's start. */
static void positions_on_long_lines(void **s) {
    (void)s;
    static const char *pieces[] = {"a", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "b"};
    char *t = malloc(12000);
    size_t n = 0;
    for (int line = 0; line < 2; line++) {
        for (int k = 0; n < (size_t)(line + 1) * 5000; k++) {
            const char *p = pieces[(k * 7 + line) % 5];
            memcpy(t + n, p, strlen(p));
            n += strlen(p);
        }
        t[n++] = '\n';
    }
    t[n] = 0;
    an_source src;
    an_source_init_mem(&src, "long.py", t, n);
    assert_false(src.ascii);
    uint32_t line = 1, col = 1, l, c;
    for (uint32_t i = 0; i < n; i++) {
        if (((unsigned char)t[i] & 0xC0) == 0x80) continue;
        an_source_position(&src, i, &l, &c);
        assert_int_equal(l, line);
        assert_int_equal(c, col);
        if (t[i] == '\n') line++, col = 1;
        else col++;
    }
    an_source_free(&src);
    free(t);
}

static void load_rejects_bad_files(void **s) {
    (void)s;
    char dir[] = "/tmp/xpuify-src-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char p[256];
    snprintf(p, sizeof p, "%s/bin.py", dir);
    FILE *f = fopen(p, "wb");
    fwrite("a\0b", 1, 3, f);
    fclose(f);
    an_source src;
    char *why;
    assert_int_equal(an_source_load(&src, p, 1 << 20, &why), AN_LOAD_BINARY);
    free(why);
    f = fopen(p, "wb");
    fwrite("x = '\xff'\n", 1, 8, f);
    fclose(f);
    assert_int_equal(an_source_load(&src, p, 1 << 20, &why), AN_LOAD_NOT_UTF8);
    assert_non_null(strstr(why, "line 1, column 6"));
    free(why);
    assert_int_equal(an_source_load(&src, p, 4, &why), AN_LOAD_TOO_LARGE);
    free(why);
    assert_int_equal(an_source_load(&src, dir, 1 << 20, &why), AN_LOAD_NOT_REGULAR);
    free(why);
    unlink(p);
    snprintf(p, sizeof p, "%s/missing.py", dir);
    assert_int_equal(an_source_load(&src, p, 1 << 20, &why), AN_LOAD_UNREADABLE);
    assert_non_null(strstr(why, "No such file"));
    free(why);
    rmdir(dir);
}

/* Columns count code points: on text mixing one- to four-byte characters over many AN_SOURCE_MARK blocks (the
 * per-block counts are taken sixteen bytes at a time), every byte's column equals a count made byte by byte. */
static void columns_on_mixed_utf8(void **st) {
    (void)st;
    static const char *const pieces[] = {"a", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "x = 1", " ", "\n"};
    char *text = malloc(40000);
    size_t len = 0;
    unsigned seed = 7;
    while (len < 39000) {
        seed = seed * 1103515245u + 12345u;
        const char *p = pieces[(seed >> 16) % 7];
        if ((seed >> 8) % 40 && !strcmp(p, "\n")) p = "b"; /* long lines: columns far into a line */
        memcpy(text + len, p, strlen(p));
        len += strlen(p);
    }
    an_source src;
    an_source_init_mem(&src, "mixed.py", text, len);
    uint32_t line = 1, col = 1;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if ((c & 0xC0) != 0x80) { /* a character's first byte: its position */
            uint32_t l, k;
            an_source_position(&src, (uint32_t)i, &l, &k);
            assert_int_equal(l, line);
            assert_int_equal(k, col);
            if (c == '\n') line++, col = 1;
            else col++;
        }
    }
    an_source_free(&src);
    free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(utf8), cmocka_unit_test(positions), cmocka_unit_test(positions_on_long_lines),
                                       cmocka_unit_test(load_rejects_bad_files), cmocka_unit_test(columns_on_mixed_utf8)};
    return cmocka_run_group_tests_name("source", tests, NULL, NULL);
}
