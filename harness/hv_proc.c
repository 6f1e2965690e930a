/* hv_proc: process-group runs with timeouts (see hv_proc.h). */
#include "harness/hv_proc.h"
#include "util/ut_buf.h"
#include "util/ut_mem.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile sig_atomic_t hv_interrupted = 0;
static struct sigaction old_int, old_term;
static bool caught;

static void on_signal(int sig) {
    (void)sig;
    hv_interrupted = 1;
}

void hv_proc_catch_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    caught = true;
}

void hv_proc_restore_signals(void) {
    if (!caught) return;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    caught = false;
}

void hv_proc_spec_env(hv_proc_spec *s, const char *name, const char *value) {
    for (size_t i = 0; i < s->nenv; i++)
        if (!strcmp(s->env_name[i], name)) { s->env_value[i] = value; return; }
    if (s->nenv < HV_ENV_MAX) {
        s->env_name[s->nenv] = name;
        s->env_value[s->nenv++] = value;
    }
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void nap(void) {
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* true when the child has ended; it stays a zombie (not reaped) so its pid, the group id, cannot be reused
 * before the group is killed */
static bool ended(pid_t pid) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0) return errno == ECHILD;
    return si.si_pid == pid;
}

static int open_out(const char *path) {
    return open(path ? path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

void hv_proc_run(const hv_proc_spec *s, hv_proc_result *r) {
    memset(r, 0, sizeof *r);
    r->exit_code = -1;
    int out = open_out(s->stdout_path), err = open_out(s->stderr_path);
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (out < 0 || err < 0 || in < 0) {
        ut_buf b;
        ut_buf_init(&b);
        ut_buf_printf(&b, "cannot open the output files: %s", strerror(errno));
        r->error = ut_buf_take(&b);
        if (out >= 0) close(out);
        if (err >= 0) close(err);
        if (in >= 0) close(in);
        return;
    }
    fflush(stdout);
    fflush(stderr);
    double t0 = now();
    pid_t pid = fork();
    if (pid < 0) {
        ut_buf b;
        ut_buf_init(&b);
        ut_buf_printf(&b, "cannot start a process: %s", strerror(errno));
        r->error = ut_buf_take(&b);
        close(out), close(err), close(in);
        return;
    }
    if (pid == 0) {
        setpgid(0, 0);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        dup2(in, 0), dup2(out, 1), dup2(err, 2);
        if (s->cwd && chdir(s->cwd) != 0) {
            dprintf(2, "xpuify verify: cannot enter %s: %s\n", s->cwd, strerror(errno));
            _exit(127);
        }
        for (size_t i = 0; i < s->nenv; i++) setenv(s->env_name[i], s->env_value[i], 1);
        execl("/bin/sh", "sh", "-c", s->cmd, (char *)NULL);
        dprintf(2, "xpuify verify: cannot run /bin/sh: %s\n", strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* also here: no window in which a kill of the group misses the child */
    close(out), close(err), close(in);
    r->started = true;
    bool killed = false;
    double deadline = s->timeout > 0 ? t0 + s->timeout : 0;
    while (!ended(pid)) {
        if ((deadline && now() >= deadline) || hv_interrupted) {
            if (hv_interrupted) r->interrupted = true;
            else r->timed_out = true;
            kill(-pid, SIGTERM);
            double grace = now() + 2.0;
            while (!ended(pid) && now() < grace) nap();
            kill(-pid, SIGKILL);
            killed = true;
            break;
        }
        nap();
    }
    /* the leader has ended (or was killed): whatever it left in its group goes too */
    if (!killed) kill(-pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    r->seconds = now() - t0;
    if (WIFEXITED(st)) r->exit_code = WEXITSTATUS(st);
    else if (WIFSIGNALED(st)) r->term_signal = WTERMSIG(st);
    if (r->timed_out || r->interrupted) r->exit_code = -1;
}

void hv_proc_result_free(hv_proc_result *r) {
    ut_free(r->error);
    r->error = NULL;
}

bool hv_proc_ok(const hv_proc_result *r) { return r->started && !r->timed_out && !r->interrupted && r->exit_code == 0; }
