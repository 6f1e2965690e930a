/* cli_color: whether a report gets ANSI colour. The order follows no-color.org and force-color.org: an explicit
 * --color wins, then NO_COLOR, then FORCE_COLOR / CLICOLOR_FORCE (CI logs that render colour), then a dumb
 * terminal, then whether the output is a terminal at all. */
#include "cli/cli_color.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool cli_color_parse(const char *s, cli_color_mode *out) {
    if (!s) return false;
    if (!strcmp(s, "auto")) *out = CLI_COLOR_AUTO;
    else if (!strcmp(s, "always")) *out = CLI_COLOR_ALWAYS;
    else if (!strcmp(s, "never")) *out = CLI_COLOR_NEVER;
    else return false;
    return true;
}

static bool set(const char *name) {
    const char *v = getenv(name);
    return v && *v;
}

static bool forced(const char *name) {
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

bool cli_color_on(cli_color_mode m, int fd) {
    if (m != CLI_COLOR_AUTO) return m == CLI_COLOR_ALWAYS;
    if (set("NO_COLOR")) return false;
    if (forced("FORCE_COLOR") || forced("CLICOLOR_FORCE")) return true;
    const char *term = getenv("TERM");
    if (term && !strcmp(term, "dumb")) return false;
    return isatty(fd);
}
