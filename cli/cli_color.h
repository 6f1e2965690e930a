/* cli_color: whether a report gets ANSI colour: --color auto|always|never and the conventions CI and terminals
 * set (NO_COLOR, FORCE_COLOR, CLICOLOR_FORCE, TERM=dumb). */
#ifndef CLI_COLOR_H
#define CLI_COLOR_H
#include <stdbool.h>

typedef enum { CLI_COLOR_AUTO = 0, CLI_COLOR_ALWAYS, CLI_COLOR_NEVER } cli_color_mode;

bool cli_color_parse(const char *s, cli_color_mode *out);
/* always/never decide; auto: NO_COLOR (set, not empty) turns colour off; else FORCE_COLOR or CLICOLOR_FORCE (set,
 * not empty, not "0") turn it on; else TERM=dumb turns it off; else colour when fd is a terminal. */
bool cli_color_on(cli_color_mode m, int fd);
#endif
