/* A kill at a chosen moment, for tests/codegen/emit-kill.sh: preloaded into
 * aotc (LD_PRELOAD), it sends SIGKILL to the process group aotc leads just
 * before the Nth fsync(2) or rename(2) of aotc and its children
 * (AOTC_KILL_AT=N): while it writes its files, or between two moves, as ^C,
 * timeout or make would at that moment. It needs no hook in aotc, so it
 * kills any aotc build the same way (an older one's too). aotc must lead its
 * process group (run it under setsid): otherwise the shim stays unarmed
 * rather than kill whoever else is in the group. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int (*real_rename)(const char *, const char *);
static int (*real_fsync)(int);
static pid_t group;
static long at = -1, count;

__attribute__((constructor)) static void init(void)
{
	/* Looked up now: the call may come in a child forked from threads. */
	real_rename = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
	real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	const char *s = getenv("AOTC_KILL_AT");
	if (!s)
		return;
	if (getpgrp() != getpid()) {
		fprintf(stderr, "kill_shim: not a process group leader (run under setsid): not armed\n");
		return;
	}
	group = getpgrp();
	at = atol(s);
}

static void maybe_kill(void)
{
	if (++count == at && group > 0)
		kill(-group, SIGKILL);
}

int rename(const char *from, const char *to)
{
	maybe_kill();
	return real_rename(from, to);
}

int fsync(int fd)
{
	maybe_kill();
	return real_fsync(fd);
}
