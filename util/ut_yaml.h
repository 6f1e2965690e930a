/* ut_yaml: what the YAML loaders (rule catalog, configuration) share: one-line errors at a node, scalar access. */
#ifndef UT_YAML_H
#define UT_YAML_H
#include "util/ut_buf.h"
#include <stdarg.h>
#include <yaml.h>

/* Appends "FILE:LINE:COL: message\n" to err; n NULL: line 1, column 1. */
void ut_yaml_verr(ut_buf *err, const char *file, const yaml_node_t *n, const char *fmt, va_list ap);
/* The value of a scalar node; NULL for any other node or none. */
const char *ut_yaml_scalar(const yaml_node_t *n);
#endif
