/* Running the tools the backends compile with (the host C++ compiler, nvcc):
 * spawning from many compile threads at once, capturing logs, scratch
 * directories. */
#ifndef AOTC_PROC_H
#define AOTC_PROC_H

#include <stddef.h>
#include <sys/types.h>

#include "util.h"

/* $TMPDIR, else /tmp. */
const char *proc_tmp_root(void);

/* Spawns argv (searched on PATH) with stdin from /dev/null. If out_fd >= 0
 * it becomes the child's stdout and stderr; else if log_path is set, both go
 * to that file (opened in the child, so no descriptor of ours leaks into
 * other threads' children). Returns the pid, or -1 with errno set. */
pid_t proc_spawn(char *const argv[], int out_fd, const char *log_path);

/* Waits for pid; its exit status, or -1 if it died of a signal. */
int proc_wait(pid_t pid);

/* Runs argv and returns what it prints (malloc'd, at most about 64 KiB), or
 * NULL with a reason in err when it cannot run, fails or prints nothing. */
char *proc_output(char *const argv[], strbuf *err);

/* Runs argv with its output in log_path; the exit status (-1: killed), or
 * -2 with errno set when it cannot be started. */
int proc_run_logged(char *const argv[], const char *log_path);

/* Creates path exclusively and writes data; 0, or -1 with errno set. */
int proc_write_new(const char *path, const void *data, size_t len);

/* Scratch files and directories carry their owner's pid in their names,
 * "<tmp>/<prefix>-<pid>-XXXXXX[.so]" with prefix "aotc-<word>", so that a
 * later run can tell the ones a killed process left behind. */

/* Makes a fresh directory "<tmp>/<prefix>-<pid>-XXXXXX" into dir; false
 * with the reason in err. The first call of a process sweeps stale scratch
 * (proc_sweep_scratch). */
bool proc_mkdtemp(const char *prefix, strbuf *dir, strbuf *err);

/* Removes, once per process, what killed aotc processes left in <tmp>:
 * each "aotc-<word>-<pid>-XXXXXX" directory (one level deep) or
 * "aotc-<word>-<pid>-XXXXXX.so" file of this user whose pid no longer
 * runs. */
void proc_sweep_scratch(void);

/* Removes dir and the files in it (one level: all a backend ever creates). */
void proc_remove_dir(const char *dir);

/* Appends the contents of a compiler's log file to err, without trailing
 * newlines; when it is empty, says how argv0 ended (status as from
 * proc_wait). */
void proc_append_log(strbuf *err, const char *log_path, const char *argv0, int status);

#endif
