/* hv_report: `xpuify verify`'s report: the matrix (original / patched / reference command x device tier:
 * status, seconds, what it was compared with, max abs and rel difference, verdict) as a text table with the
 * details of each failure, or as JSON. */
#ifndef HV_REPORT_H
#define HV_REPORT_H
#include "harness/hv_verify.h"
#include <stdio.h>

typedef struct {
    const hv_verify *v;
    const char *version;
    const char *target;        /* "compat", "accelerator", ... */
    const char *target_reason; /* why */
    size_t fixed, files_changed;
    bool fix_errors;
} hv_report;

void hv_report_text(const hv_report *r, FILE *fp);
void hv_report_json(const hv_report *r, FILE *fp);
#endif
