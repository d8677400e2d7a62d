#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

const char *proc_tmp_root(void)
{
	const char *t = getenv("TMPDIR");
	return t && *t ? t : "/tmp";
}

pid_t proc_spawn(char *const argv[], int out_fd, const char *log_path)
{
	posix_spawn_file_actions_t fa;
	if (posix_spawn_file_actions_init(&fa) != 0)
		return -1;
	int rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (rc == 0 && out_fd >= 0) {
		rc = posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
		if (rc == 0)
			rc = posix_spawn_file_actions_adddup2(&fa, out_fd, 2);
		if (rc == 0)
			rc = posix_spawn_file_actions_addclose(&fa, out_fd);
	} else if (rc == 0 && log_path) {
		rc = posix_spawn_file_actions_addopen(&fa, 2, log_path,
		                                      O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (rc == 0)
			rc = posix_spawn_file_actions_adddup2(&fa, 2, 1);
	}
	pid_t pid = -1;
	if (rc == 0)
		rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return pid;
}

int proc_wait(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

char *proc_output(char *const argv[], strbuf *err)
{
	int p[2];
	if (pipe(p) < 0) {
		strbuf_printf(err, "pipe: %s", strerror(errno));
		return NULL;
	}
	/* The read end is ours alone; keep it out of every child. */
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	pid_t pid = proc_spawn(argv, p[1], NULL);
	int e = errno;
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		strbuf_printf(err, "cannot run %s: %s", argv[0], strerror(e));
		return NULL;
	}
	strbuf out;
	strbuf_init(&out);
	char buf[4096];
	for (;;) {
		ssize_t n = read(p[0], buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (out.len < 65536)
			strbuf_putn(&out, buf, (size_t)n);
	}
	close(p[0]);
	int status = proc_wait(pid);
	if (status != 0 || !out.data[0]) {
		strbuf_printf(err, "%s failed (exit status %d)", argv[0], status);
		strbuf_finish(&out);
		return NULL;
	}
	return out.data;
}

int proc_run_logged(char *const argv[], const char *log_path)
{
	pid_t pid = proc_spawn(argv, -1, log_path);
	if (pid < 0)
		return -2;
	return proc_wait(pid);
}

int proc_write_new(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	const char *p = data;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return close(fd);
}

bool proc_mkdtemp(const char *prefix, strbuf *dir, strbuf *err)
{
	proc_sweep_scratch();
	strbuf_printf(dir, "%s/%s-%ld-XXXXXX", proc_tmp_root(), prefix, (long)getpid());
	if (!mkdtemp(dir->data)) {
		strbuf_printf(err, "mkdtemp %s: %s", dir->data, strerror(errno));
		dir->len = 0;
		dir->data[0] = 0;
		return false;
	}
	return true;
}

void proc_remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		strbuf path;
		strbuf_init(&path);
		struct dirent *e;
		while ((e = readdir(d))) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			path.len = 0;
			strbuf_printf(&path, "%s/%s", dir, e->d_name);
			unlink(path.data);
		}
		strbuf_finish(&path);
		closedir(d);
	}
	rmdir(dir);
}

void proc_append_log(strbuf *err, const char *log_path, const char *argv0, int status)
{
	char *text = read_file(log_path, NULL);
	if (text && text[0]) {
		strbuf_puts(err, text);
		/* One trailing newline at most: callers add their own. */
		while (err->len && err->data[err->len - 1] == '\n')
			err->data[--err->len] = 0;
	} else {
		strbuf_printf(err, "%s %s", argv0,
		              status < 0 ? "was killed by a signal" : "failed with no message");
	}
	free(text);
}

/* The owner's pid in a scratch name "aotc-<word>-<pid>-XXXXXX[.so]"; 0 when
 * name is not one (so that nothing else in <tmp> is touched). */
static pid_t scratch_owner(const char *name)
{
	if (strncmp(name, "aotc-", 5) != 0)
		return 0;
	const char *p = name + 5, *word = p;
	while (*p >= 'a' && *p <= 'z')
		p++;
	if (p == word || *p++ != '-')
		return 0;
	long pid = 0;
	const char *digits = p;
	while (*p >= '0' && *p <= '9' && p - digits < 10)
		pid = pid * 10 + (*p++ - '0');
	if (p == digits || *p++ != '-' || pid <= 0)
		return 0;
	for (int i = 0; i < 6; i++, p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
			return 0;
	return *p == 0 || !strcmp(p, ".so") ? (pid_t)pid : 0;
}

static void sweep(void)
{
	const char *root = proc_tmp_root();
	DIR *d = opendir(root);
	if (!d)
		return;
	strbuf path;
	strbuf_init(&path);
	struct dirent *e;
	while ((e = readdir(d))) {
		pid_t pid = scratch_owner(e->d_name);
		/* A pid that runs may be the owner's or a stranger's that took
		 * its number: either way it stays. */
		if (!pid || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		path.len = 0;
		strbuf_printf(&path, "%s/%s", root, e->d_name);
		struct stat st;
		if (lstat(path.data, &st) != 0 || st.st_uid != getuid())
			continue;
		if (S_ISDIR(st.st_mode))
			proc_remove_dir(path.data);
		else if (S_ISREG(st.st_mode))
			unlink(path.data);
	}
	strbuf_finish(&path);
	closedir(d);
}

void proc_sweep_scratch(void)
{
	/* Once per process: what killed processes left is the same for every
	 * caller, and /tmp may be large. */
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, sweep);
}
