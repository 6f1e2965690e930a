/* an_message: template expansion for diagnostic messages. Unknown or empty placeholders expand to nothing. */
#include "an_message.h"

char *an_message_format(const char *t, const an_message_vars *v) {
    ut_buf b;
    ut_buf_init(&b);
    bool used_note = false;
    while (*t) {
        if (*t == '{') {
            const char *close = strchr(t, '}');
            if (close) {
                size_t n = (size_t)(close - t - 1);
                const char *val = NULL;
                bool known = true;
                if (n == 4 && !strncmp(t + 1, "name", 4)) val = v->name;
                else if (n == 11 && !strncmp(t + 1, "replacement", 11)) val = v->replacement;
                else if (n == 9 && !strncmp(t + 1, "min_torch", 9)) val = v->min_torch;
                else if (n == 4 && !strncmp(t + 1, "text", 4)) val = v->text;
                else if (n == 4 && !strncmp(t + 1, "note", 4)) val = v->note, used_note = true;
                else known = false;
                if (known) {
                    if (val) ut_buf_puts(&b, val);
                    t = close + 1;
                    continue;
                }
            }
        }
        ut_buf_putc(&b, *t++);
    }
    if (!used_note && v->note && *v->note) {
        ut_buf_puts(&b, ". ");
        ut_buf_puts(&b, v->note);
    }
    return ut_buf_take(&b);
}
