/* hv_compare: compares what two runs produced. Standard output and text files: the same lines with the
 * same text between numbers, each number within tolerance. `.npy` arrays: the same dtype and shape, each
 * element within tolerance. Raw little-endian float32/float64 files: the same length, each value within
 * tolerance. Anything else: the same bytes. Tolerance as numpy.isclose: |a - b| <= atol + rtol * |b|, b the
 * reference; NaN equals NaN, infinities equal when their signs agree. */
#ifndef HV_COMPARE_H
#define HV_COMPARE_H
#include <stdbool.h>
#include <stddef.h>

typedef enum { HV_OUT_STDOUT, HV_OUT_AUTO, HV_OUT_TEXT, HV_OUT_NPY, HV_OUT_F32, HV_OUT_F64, HV_OUT_BYTES } hv_out_kind;

typedef struct {
    char *spec;  /* as given: "stdout", "logits.npy", "f32:out/raw.bin" */
    char *path;  /* relative to the run's directory; NULL for stdout */
    hv_out_kind kind;
} hv_output;

/* Parses a --compare operand. false: *why (heap) says what is wrong (absolute path, `..`, unknown prefix). */
bool hv_output_parse(const char *spec, hv_output *out, char **why);
void hv_output_free(hv_output *o);
/* The kind a file is compared as, from its prefix or name (.npy, .f32/.float32/.fp32, .f64/.float64/.fp64) */
hv_out_kind hv_output_kind_for(const hv_output *o);

typedef struct {
    bool equal;      /* everything within tolerance */
    size_t numbers;  /* values compared numerically */
    double max_abs, max_rel; /* over the values compared (0 when none; max_rel may be INFINITY) */
    bool numeric;    /* max_abs/max_rel mean something */
    char *detail;    /* the first difference, or NULL (heap) */
} hv_cmp;

void hv_cmp_init(hv_cmp *c);
void hv_cmp_free(hv_cmp *c);
/* Compares candidate a with reference b (their bytes). name labels the detail message. */
void hv_compare_bytes(hv_out_kind kind, const char *name, const char *a, size_t alen, const char *b, size_t blen,
                      double rtol, double atol, hv_cmp *out);
/* Folds one output's comparison into a total (equal only when all are; maxima; the first detail). */
void hv_cmp_merge(hv_cmp *total, const hv_cmp *one);
/* Reads a whole file; NULL when it cannot (errno set). */
char *hv_read_file(const char *path, size_t *len);
#endif
