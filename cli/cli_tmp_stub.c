/* placeholder */
#include "cli.h"
#include <stdio.h>
int cli_report(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "not yet\n"); return 2; }
