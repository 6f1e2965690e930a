/* hv_proc: runs one shell command in its own process group with a wall-clock limit: stdout and stderr go to
 * files, the environment gets extra variables, and on timeout (or interruption) the whole group is killed
 * (SIGTERM, then SIGKILL). Whatever the command leaves running in its group is killed when it exits. */
#ifndef HV_PROC_H
#define HV_PROC_H
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#define HV_ENV_MAX 16

typedef struct {
    const char *cmd;         /* run as /bin/sh -c CMD */
    const char *cwd;
    const char *env_name[HV_ENV_MAX];
    const char *env_value[HV_ENV_MAX];
    size_t nenv;
    const char *stdout_path, *stderr_path; /* NULL: /dev/null */
    double timeout;          /* seconds; <= 0: no limit */
} hv_proc_spec;

typedef struct {
    bool started;
    int exit_code;           /* -1 when it ended by a signal, timed out or never started */
    int term_signal;         /* the signal that ended it, or 0 */
    bool timed_out, interrupted;
    double seconds;
    char *error;             /* why it could not start (heap) */
} hv_proc_result;

/* Set by the SIGINT/SIGTERM handler hv_proc_catch_signals installs: the running command is killed. */
extern volatile sig_atomic_t hv_interrupted;
void hv_proc_catch_signals(void);
void hv_proc_restore_signals(void);

void hv_proc_spec_env(hv_proc_spec *s, const char *name, const char *value);
void hv_proc_run(const hv_proc_spec *s, hv_proc_result *r);
void hv_proc_result_free(hv_proc_result *r);
/* true: started, exited 0, not timed out */
bool hv_proc_ok(const hv_proc_result *r);
#endif
