/* cli_progress: a one-line progress indicator on stderr ("checked 120/4000 files"), shown only when stderr is a
 * terminal and the run lasts (XPUIFY_PROGRESS_DELAY_MS, default 500 ms); silent otherwise; erased at the end. */
#ifndef CLI_PROGRESS_H
#define CLI_PROGRESS_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    bool on;
    bool shown;
    int64_t start_ms, last_ms, delay_ms;
    pthread_mutex_t mu;
    const char *what;
} cli_progress;

void cli_progress_init(cli_progress *p, bool enabled, const char *what);
/* an_options.progress callback (thread-safe) */
void cli_progress_update(void *ctx, size_t done, size_t total);
/* erases the line before a message goes to stderr; the next update draws it again */
void cli_progress_pause(cli_progress *p);
/* a run in stages (report: check, then compute the fixes): the next updates count WHAT */
void cli_progress_stage(cli_progress *p, const char *what);
void cli_progress_end(cli_progress *p);
#endif
