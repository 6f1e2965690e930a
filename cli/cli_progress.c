/* cli_progress: the progress line. */
#include "cli/cli_progress.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

void cli_progress_init(cli_progress *p, bool enabled, const char *what) {
    p->on = enabled && isatty(2);
    p->shown = false;
    p->start_ms = now_ms();
    p->last_ms = 0;
    const char *d = getenv("XPUIFY_PROGRESS_DELAY_MS");
    p->delay_ms = d && *d ? atoll(d) : 500;
    p->what = what;
    pthread_mutex_init(&p->mu, NULL);
}

void cli_progress_update(void *ctx, size_t done, size_t total) {
    cli_progress *p = ctx;
    if (!p->on) return;
    int64_t t = now_ms();
    if (t - p->start_ms < p->delay_ms) return;
    pthread_mutex_lock(&p->mu);
    if (!p->shown || t - p->last_ms >= 100 || done == total) {
        fprintf(stderr, "\r\033[Kxpuify: %s %zu/%zu files (%zu%%)", p->what, done, total, total ? done * 100 / total : 100);
        fflush(stderr);
        p->shown = true;
        p->last_ms = t;
    }
    pthread_mutex_unlock(&p->mu);
}

void cli_progress_pause(cli_progress *p) {
    if (!p->on) return;
    pthread_mutex_lock(&p->mu);
    if (p->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        p->shown = false;
    }
    pthread_mutex_unlock(&p->mu);
}

void cli_progress_stage(cli_progress *p, const char *what) {
    pthread_mutex_lock(&p->mu);
    p->what = what;
    pthread_mutex_unlock(&p->mu);
}

void cli_progress_end(cli_progress *p) {
    if (p->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->shown = false;
    pthread_mutex_destroy(&p->mu);
}
