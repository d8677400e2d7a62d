#include "outdir.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "util.h"

uint64_t outdir_set_hash(const outdir_file *files, int n)
{
	XXH3_state_t *s = XXH3_createState();
	if (!s)
		die("out of memory");
	XXH3_64bits_reset(s);
	for (int i = 0; i < n; i++) {
		/* The name, its NUL, the length as 8 little-endian bytes, the
		 * bytes: no two different sets give the same stream. */
		unsigned char len[8];
		for (int b = 0; b < 8; b++)
			len[b] = (unsigned char)((uint64_t)files[i].len >> (8 * b));
		XXH3_64bits_update(s, files[i].name, strlen(files[i].name) + 1);
		XXH3_64bits_update(s, len, sizeof len);
		XXH3_64bits_update(s, files[i].data, files[i].len);
	}
	uint64_t h = XXH3_64bits_digest(s);
	XXH3_freeState(s);
	return h;
}

void outdir_set_names(const char *prefix, uint64_t set, strbuf *macro, strbuf *symbol)
{
	if (macro) {
		for (const char *p = prefix; *p; p++)
			strbuf_putc(macro, (char)toupper((unsigned char)*p));
		strbuf_puts(macro, "_SET");
	}
	if (symbol)
		strbuf_printf(symbol, "%s_set_%016llx", prefix, (unsigned long long)set);
}

void outdir_set_check(strbuf *sb, const char *prefix, uint64_t set, const char *message)
{
	strbuf_puts(sb, "#if ");
	outdir_set_names(prefix, set, sb, NULL);
	strbuf_printf(sb, " != UINT64_C(0x%016llx)\n#error \"%s\"\n#endif\n", (unsigned long long)set,
	              message);
}

/* ---- Strays ---------------------------------------------------------------- */

static const char *const tmp_prefixes[] = {".aotc-emit-", ".aotc-link-"};

static bool starts_with(const char *s, const char *p) { return !strncmp(s, p, strlen(p)); }

/* The first line of /proc/PID/WHAT into buf; false where there is no /proc. */
static bool proc_line(const char *pid, const char *what, char *buf, size_t n)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%s/%s", pid, what);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool ok = fgets(buf, (int)n, f) != NULL;
	fclose(f);
	return ok;
}

/* Whether the temporary directory name (".aotc-emit-PID-XXXXXX"), last
 * changed at mtime, belongs to no running aotc. Its process is gone (ESRCH,
 * or a zombie: killed, not yet reaped, as when timeout kills aotc and
 * itself), or runs another program (the pid was reused; /proc says so where
 * there is one), or it is older than any live emit keeps one, which covers
 * a pid reused by another aotc and a process of another pid namespace that
 * shares the directory. A live aotc's directory is never taken early: its
 * moves would fail. */
static bool temp_is_stale(const char *name, time_t mtime)
{
	const char *p = strchr(name + 1, '-') + 1; /* after ".aotc-emit-" */
	p = strchr(p, '-') + 1;
	char *end;
	errno = 0;
	long pid = strtol(p, &end, 10);
	if (end == p || *end != '-' || errno || pid <= 0 || pid > INT32_MAX)
		return difftime(time(NULL), mtime) > OUTDIR_STALE_S; /* not a name we make */
	if (pid == (long)getpid())
		return false;
	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return true;
	char pidtext[24], theirs[512], ours[64];
	snprintf(pidtext, sizeof pidtext, "%ld", pid);
	/* "PID (comm) S ...": the state follows the last ')'. */
	const char *paren;
	if (proc_line(pidtext, "stat", theirs, sizeof theirs) && (paren = strrchr(theirs, ')')) &&
	    (paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X')))
		return true;
	if (proc_line(pidtext, "comm", theirs, sizeof theirs) && proc_line("self", "comm", ours, sizeof ours) &&
	    strcmp(theirs, ours) != 0)
		return true;
	return difftime(time(NULL), mtime) > OUTDIR_STALE_S;
}

/* Removes the plain entries of directory path, then the directory; what
 * fails to go (a subdirectory nobody of aotc made) stays. */
static void remove_flat(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *dp = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dp) {
		if (fd >= 0)
			close(fd);
		rmdir(path);
		return;
	}
	for (struct dirent *de; (de = readdir(dp)) != NULL;)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(fd, de->d_name, 0);
	closedir(dp);
	rmdir(path);
}

/* Whether name is an older aotc's temporary for file n: n.tmp (emit's),
 * n.tmp.tmpXXXXXX and n.tmpXXXXXX (write_file_atomic's, under emit and
 * link). */
static bool old_temp_of(const char *name, const char *n)
{
	size_t ln = strlen(n);
	if (strncmp(name, n, ln) != 0)
		return false;
	const char *r = name + ln;
	if (!strcmp(r, ".tmp"))
		return true;
	if (starts_with(r, ".tmp.tmp"))
		return strlen(r) == strlen(".tmp.tmp") + 6;
	return starts_with(r, ".tmp") && strlen(r) == strlen(".tmp") + 6;
}

/* Whether name is an older aotc's temporary in an output directory. They
 * carry no owner: an aotc that still writes one only fails to rename it (an
 * error, never a mixture), so they go at once. */
static bool old_temp(const char *name, const outdir_file *files, int n)
{
	if (old_temp_of(name, "aotc.h"))
		return true;
	for (int i = 0; i < n; i++)
		if (old_temp_of(name, files[i].name))
			return true;
	/* Another kernel's, under emit's names: X.tmp, or ending in .tmpXXXXXX. */
	size_t len = strlen(name);
	return starts_with(name, "_aot_") &&
	       ((len >= 4 && !strcmp(name + len - 4, ".tmp")) ||
	        (len >= 10 && !strncmp(name + len - 10, ".tmp", 4)));
}

/* Step 1 of outdir_write. Failures are silent: a stray left is harmless,
 * only untidy, and the next run tries again. */
static void remove_strays(const char *dir, const outdir_file *files, int n)
{
	DIR *dp = opendir(dir);
	if (!dp)
		return;
	strbuf path;
	strbuf_init(&path);
	uid_t me = geteuid();
	for (struct dirent *de; (de = readdir(dp)) != NULL;) {
		bool temp_dir = false;
		for (size_t i = 0; i < COUNTOF(tmp_prefixes); i++)
			temp_dir |= starts_with(de->d_name, tmp_prefixes[i]);
		if (!temp_dir && !old_temp(de->d_name, files, n))
			continue;
		path.len = 0;
		strbuf_printf(&path, "%s/%s", dir, de->d_name);
		struct stat st;
		if (lstat(path.data, &st) < 0 || st.st_uid != me)
			continue;
		if (temp_dir && S_ISDIR(st.st_mode) && temp_is_stale(de->d_name, st.st_mtime))
			remove_flat(path.data);
		else if (!temp_dir && S_ISREG(st.st_mode))
			unlink(path.data);
	}
	closedir(dp);
	strbuf_finish(&path);
}

/* ---- Writing ----------------------------------------------------------------- */

/* Whether path holds exactly data[0..len). */
static bool holds(const char *path, const char *data, size_t len)
{
	size_t have_len;
	char *have = read_file_max(path, &have_len, len);
	bool same = have && have_len == len && !memcmp(have, data, len);
	free(have);
	return same;
}

/* path, created (never replaced) with the umask's permissions, holding
 * data[0..len) on the disk: 0, or -1 with errno. */
static int write_new(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0)
		return -1;
	while (len > 0) {
		ssize_t w = write(fd, data, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			goto fail;
		data += w;
		len -= (size_t)w;
	}
	if (fsync(fd) < 0)
		goto fail;
	return close(fd);
fail:;
	int e = errno;
	close(fd);
	errno = e;
	return -1;
}

/* How far the moves got, shared with the child that makes them. */
typedef struct moves {
	int done;   /* files moved */
	int err;    /* errno of the move that failed, or 0 */
} moves;

/* The moves, then dir to disk and the emptied temporary directory away.
 * Only async-signal-safe calls: it runs in a child of a process that may
 * have threads. */
static void move_all(char *const *from, char *const *to, int n, int dirfd, const char *tmp,
                     volatile moves *m)
{
	for (int i = 0; i < n; i++) {
		if (rename(from[i], to[i]) < 0) {
			m->err = errno;
			return;
		}
		m->done = i + 1;
	}
	if (dirfd >= 0)
		fsync(dirfd);
	rmdir(tmp);
}

/* Moves from[i] to to[i] in order: 0, or -1 with *m saying how far (err 0:
 * the child was killed). */
static int commit(char *const *from, char *const *to, int n, int dirfd, const char *tmp,
                  volatile moves *m)
{
	/* Between the first move and the last, dir holds a mixture; SIGKILL
	 * cannot be blocked. So a child that has left our session and blocks
	 * every other signal makes the moves: ^C, timeout or make killing
	 * aotc's process group does not reach it, and it takes microseconds.
	 * Only a kill aimed at the child itself, or the machine stopping, can
	 * still leave a mixture, which the set hashes refuse to build. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pid_t pid = fork();
	if (pid == 0) {
		setsid();
		move_all(from, to, n, dirfd, tmp, m);
		_exit(0);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		move_all(from, to, n, dirfd, tmp, m); /* no child to be had: here, then */
	} else {
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	return m->done == n ? 0 : -1;
}

int outdir_write(const char *dir, const char *tag, const outdir_file *files, int n, diags *d)
{
	/* Two runs writing into dir at once (make -j) take turns, from the
	 * comparison to the last move: interleaved moves would mix their sets.
	 * The lock goes with dirfd, which the child that moves shares. Where
	 * the file system has no flock, they do not take turns. */
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (dirfd >= 0 && flock(dirfd, LOCK_EX) < 0 && errno == EINTR)
		;
	remove_strays(dir, files, n);
	int status = 0, nmove = 0;
	/* The files to move: which of files[], from where in tmp, to where. */
	int *which = xcalloc((size_t)n + 1, sizeof *which);
	char **from = xcalloc((size_t)n + 1, sizeof *from), **to = xcalloc((size_t)n + 1, sizeof *to);
	strbuf tmp;
	strbuf_init(&tmp);
	volatile moves *m = MAP_FAILED;
	for (int i = 0; i < n; i++) {
		strbuf p;
		strbuf_init(&p);
		strbuf_printf(&p, "%s/%s", dir, files[i].name);
		struct stat st;
		if (holds(p.data, files[i].data, files[i].len)) {
			strbuf_finish(&p);
			continue;
		}
		to[nmove] = p.data;
		which[nmove++] = i;
		/* rename(2) would refuse to replace a directory only half way
		 * through the moves: refuse it now. */
		if (lstat(p.data, &st) == 0 && S_ISDIR(st.st_mode)) {
			diag_plain_error(d, "cannot write %s: it is a directory", p.data);
			status = -1;
			goto out;
		}
	}
	if (nmove == 0)
		goto out;
	strbuf_printf(&tmp, "%s/.aotc-%s-%ld-XXXXXX", dir, tag, (long)getpid());
	if (!mkdtemp(tmp.data)) {
		diag_plain_error(d, "cannot write into %s: %s", dir, strerror(errno));
		tmp.len = 0;
		status = -1;
		goto out;
	}
	for (int j = 0; j < nmove; j++) {
		const outdir_file *f = &files[which[j]];
		strbuf p;
		strbuf_init(&p);
		strbuf_printf(&p, "%s/%s", tmp.data, f->name);
		from[j] = p.data;
		if (write_new(from[j], f->data, f->len) < 0) {
			diag_plain_error(d, "cannot write %s: %s", to[j], strerror(errno));
			status = -1;
			goto out;
		}
	}
	/* Shared with the child, so that it can say how far it got. */
	m = mmap(NULL, sizeof *m, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		diag_plain_error(d, "cannot write into %s: %s", dir, strerror(errno));
		status = -1;
		goto out;
	}
	if (commit(from, to, nmove, dirfd, tmp.data, m) < 0) {
		const char *why = m->err ? strerror(m->err) : "the process moving it was killed";
		if (m->done == 0)
			diag_plain_error(d, "cannot write %s: %s", to[0], why);
		else
			diag_plain_error(d, "cannot write %s: %s; %d files of the set were replaced before it, so %s holds files of two sets, which refuse to build together: write them again",
			                 to[m->done], why, m->done, dir);
		status = -1;
	}
out:
	if (tmp.len)
		remove_flat(tmp.data); /* the moves emptied and removed it, unless something failed */
	if (m != MAP_FAILED)
		munmap((void *)m, sizeof *m);
	if (dirfd >= 0)
		close(dirfd);
	for (int j = 0; j < n; j++) {
		free(from[j]);
		free(to[j]);
	}
	free(which);
	free(from);
	free(to);
	strbuf_finish(&tmp);
	return status;
}
