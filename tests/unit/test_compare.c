/* Unit tests for hv_compare: numbers in text (exponents, words with digits, nan/inf, CRLF), .npy headers
 * (versions 1 and 2, float16, big-endian, unsupported dtypes compared as bytes), raw floats, bytes, and
 * --compare operand parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "harness/hv_compare.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static hv_cmp cmp_text(const char *a, const char *b, double rtol, double atol) {
    hv_cmp c;
    hv_compare_bytes(HV_OUT_STDOUT, "stdout", a, strlen(a), b, strlen(b), rtol, atol, &c);
    return c;
}

static void text_numbers(void **s) {
    (void)s;
    hv_cmp c = cmp_text("loss 1e-3\nacc 0.5\n", "loss 0.001\r\nacc 0.5", 0, 0);
    assert_true(c.equal);
    assert_int_equal(c.numbers, 2);
    hv_cmp_free(&c);
    /* digits inside words are text: fp16 vs fp32 is a text difference */
    c = cmp_text("dtype fp16 1.0\n", "dtype fp32 1.0\n", 1, 1);
    assert_false(c.equal);
    assert_string_equal(c.detail, "stdout line 1: `dtype fp16 1.0`, the reference has `dtype fp32 1.0`");
    hv_cmp_free(&c);
    c = cmp_text("x nan inf -inf\n", "x NaN inf -Infinity\n", 0, 0);
    assert_true(c.equal);
    hv_cmp_free(&c);
    c = cmp_text("x inf\n", "x -inf\n", 0, 0);
    assert_false(c.equal);
    assert_true(isinf(c.max_abs));
    hv_cmp_free(&c);
    /* tolerance is relative to the reference (the second argument) */
    c = cmp_text("v 1.1\n", "v 1.0\n", 0.11, 0);
    assert_true(c.equal);
    assert_true(fabs(c.max_rel - 0.1) < 1e-9);
    hv_cmp_free(&c);
    c = cmp_text("v 1.0\n", "v 1.1\n", 0.09, 0);
    assert_false(c.equal);
    assert_string_equal(c.detail, "stdout line 1: 1.0, the reference has 1.1 (tolerance: rtol 0.09, atol 0)");
    hv_cmp_free(&c);
    /* a sentence's full stop is not part of the number; version strings stay consistent */
    c = cmp_text("done at 0.5. v1.2.3\n", "done at 0.5000001. v1.2.3\n", 1e-5, 0);
    assert_true(c.equal);
    assert_int_equal(c.numbers, 1);
    hv_cmp_free(&c);
    c = cmp_text("a\nb\n", "a\n", 0, 0);
    assert_false(c.equal);
    assert_string_equal(c.detail, "stdout: 2 lines, the reference has 1");
    hv_cmp_free(&c);
    c = cmp_text("", "", 0, 0);
    assert_true(c.equal);
    hv_cmp_free(&c);
}

/* a .npy file in memory: version 1 or 2 header padded to 64 bytes */
static size_t npy(char *out, int version, const char *descr, const char *shape, const void *data, size_t n) {
    char dict[200];
    int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
    size_t pre = version == 1 ? 10 : 12;
    size_t total = (pre + (size_t)dl + 1 + 63) / 64 * 64;
    size_t hl = total - pre;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (char)version, out[7] = 0;
    if (version == 1) out[8] = (char)(hl & 0xff), out[9] = (char)(hl >> 8);
    else out[8] = (char)(hl & 0xff), out[9] = (char)(hl >> 8), out[10] = 0, out[11] = 0;
    memset(out + pre, ' ', hl);
    memcpy(out + pre, dict, (size_t)dl);
    out[total - 1] = '\n';
    memcpy(out + total, data, n);
    return total + n;
}

static void npy_files(void **s) {
    (void)s;
    char a[512], b[512];
    float fa[3] = {1, 2, 3}, fb[3] = {1, 2, 3.5f};
    size_t na = npy(a, 1, "<f4", "(3,)", fa, sizeof fa), nb = npy(b, 2, "<f4", "(3,)", fb, sizeof fb);
    hv_cmp c;
    hv_compare_bytes(HV_OUT_NPY, "x.npy", a, na, b, nb, 0, 0, &c);
    assert_false(c.equal);
    assert_int_equal(c.numbers, 3);
    assert_true(fabs(c.max_abs - 0.5) < 1e-12);
    assert_string_equal(c.detail, "x.npy: value 2 is 3, the reference has 3.5 (tolerance: rtol 0, atol 0)");
    hv_cmp_free(&c);
    hv_compare_bytes(HV_OUT_NPY, "x.npy", a, na, b, nb, 0, 0.5, &c);
    assert_true(c.equal);
    hv_cmp_free(&c);
    /* float16: 1.0 = 0x3c00, 2.5 = 0x4100; big-endian float64 */
    uint16_t h[2] = {0x3c00, 0x4100};
    double dv = 2.5;
    unsigned char be[8];
    memcpy(be, &dv, 8);
    for (int i = 0; i < 4; i++) { unsigned char t = be[i]; be[i] = be[7 - i]; be[7 - i] = t; }
    na = npy(a, 1, "<f2", "(2,)", h, sizeof h);
    hv_compare_bytes(HV_OUT_NPY, "h.npy", a, na, a, na, 0, 0, &c);
    assert_true(c.equal);
    assert_int_equal(c.numbers, 2);
    hv_cmp_free(&c);
    na = npy(a, 1, ">f8", "()", be, 8);
    double le = 2.5000001;
    nb = npy(b, 1, ">f8", "()", be, 8);
    hv_compare_bytes(HV_OUT_NPY, "be.npy", a, na, b, nb, 0, 0, &c);
    assert_true(c.equal);
    hv_cmp_free(&c);
    nb = npy(b, 1, "<f8", "()", &le, 8);
    hv_compare_bytes(HV_OUT_NPY, "be.npy", a, na, b, nb, 1e-3, 0, &c);
    assert_false(c.equal);
    assert_string_equal(c.detail, "be.npy: dtype >f8, the reference has <f8");
    hv_cmp_free(&c);
    /* complex values: compared byte by byte */
    float cx[2] = {1, 2}, cy[2] = {1, 2.5f};
    na = npy(a, 1, "<c8", "(1,)", cx, sizeof cx);
    nb = npy(b, 1, "<c8", "(1,)", cy, sizeof cy);
    hv_compare_bytes(HV_OUT_NPY, "c.npy", a, na, b, nb, 1, 1, &c);
    assert_false(c.equal);
    assert_non_null(strstr(c.detail, "bytes differ"));
    hv_cmp_free(&c);
    /* not an array */
    hv_compare_bytes(HV_OUT_NPY, "bad.npy", "junk", 4, b, nb, 0, 0, &c);
    assert_false(c.equal);
    assert_string_equal(c.detail, "bad.npy: not a .npy file, the reference is an array of <c8");
    hv_cmp_free(&c);
}

static void raw_and_bytes(void **s) {
    (void)s;
    double a[2] = {NAN, 1.0}, b[2] = {NAN, 1.0 + 1e-12};
    hv_cmp c;
    hv_compare_bytes(HV_OUT_F64, "v.f64", (char *)a, sizeof a, (char *)b, sizeof b, 1e-9, 0, &c);
    assert_true(c.equal);
    hv_cmp_free(&c);
    hv_compare_bytes(HV_OUT_F32, "v.f32", (char *)a, 6, (char *)b, 8, 0, 0, &c);
    assert_false(c.equal);
    assert_string_equal(c.detail, "v.f32: 6 bytes is not a whole number of float32 values");
    hv_cmp_free(&c);
    hv_compare_bytes(HV_OUT_AUTO, "b.bin", "a\0b", 3, "a\0c", 3, 1, 1, &c);
    assert_false(c.equal);
    assert_string_equal(c.detail, "b.bin: the bytes differ from offset 2");
    hv_cmp_free(&c);
    /* text files (no NUL) get the numeric comparison */
    hv_compare_bytes(HV_OUT_AUTO, "m.txt", "acc 0.90001\n", 12, "acc 0.9\n", 8, 1e-4, 0, &c);
    assert_true(c.equal);
    hv_cmp_free(&c);
}

static void operands(void **s) {
    (void)s;
    hv_output o;
    char *why;
    assert_true(hv_output_parse("stdout", &o, &why));
    assert_int_equal(o.kind, HV_OUT_STDOUT);
    assert_null(o.path);
    hv_output_free(&o);
    assert_true(hv_output_parse("f32:out/raw.bin", &o, &why));
    assert_string_equal(o.path, "out/raw.bin");
    assert_int_equal(hv_output_kind_for(&o), HV_OUT_F32);
    hv_output_free(&o);
    assert_true(hv_output_parse("res/logits.NPY", &o, &why));
    assert_int_equal(hv_output_kind_for(&o), HV_OUT_NPY);
    hv_output_free(&o);
    assert_true(hv_output_parse("w.float64", &o, &why));
    assert_int_equal(hv_output_kind_for(&o), HV_OUT_F64);
    hv_output_free(&o);
    assert_true(hv_output_parse("a..b/c", &o, &why)); /* `..` only as a whole component */
    hv_output_free(&o);
    assert_false(hv_output_parse("/abs", &o, &why));
    free(why);
    assert_false(hv_output_parse("x/../../y", &o, &why));
    assert_non_null(strstr(why, "leaves the project"));
    free(why);
    assert_false(hv_output_parse("npy:", &o, &why));
    free(why);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(text_numbers), cmocka_unit_test(npy_files),
                                       cmocka_unit_test(raw_and_bytes), cmocka_unit_test(operands)};
    return cmocka_run_group_tests_name("compare", tests, NULL, NULL);
}
