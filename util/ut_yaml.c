/* ut_yaml: errors at a YAML node and scalar access (see ut_yaml.h). */
#include "util/ut_yaml.h"

void ut_yaml_verr(ut_buf *err, const char *file, const yaml_node_t *n, const char *fmt, va_list ap) {
    ut_buf_printf(err, "%s:%zu:%zu: ", file, n ? n->start_mark.line + 1 : 1, n ? n->start_mark.column + 1 : 1);
    ut_buf_vprintf(err, fmt, ap);
    ut_buf_putc(err, '\n');
}

const char *ut_yaml_scalar(const yaml_node_t *n) {
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}
