#include "fuzz.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

FILE *fuzz_sink(void)
{
	static FILE *sink;
	if (!sink && !(sink = fopen("/dev/null", "w")))
		die("fuzz: cannot open /dev/null");
	return sink;
}

void fuzz_diags(diags *d)
{
	diags_init(d);
	d->out = fuzz_sink();
}

static char tmpdir[4096];

static void remove_tmpdir(void)
{
	/* Only the files the targets write, then the directory. */
	static const char *names[] = {"db.json", "db.json.journal", "db2.json",
	                              "db2.json.journal", "shapes.json", "kernel.cu"};
	char path[4200];
	for (size_t i = 0; i < COUNTOF(names); i++) {
		snprintf(path, sizeof path, "%s/%s", tmpdir, names[i]);
		unlink(path);
	}
	rmdir(tmpdir);
}

const char *fuzz_tmpdir(void)
{
	if (!tmpdir[0]) {
		const char *base = getenv("TMPDIR");
		snprintf(tmpdir, sizeof tmpdir, "%s/aotc-fuzz-XXXXXX", base && *base ? base : "/tmp");
		if (!mkdtemp(tmpdir))
			die("fuzz: cannot create %s", tmpdir);
		atexit(remove_tmpdir);
	}
	return tmpdir;
}

void fuzz_write(const char *path, const void *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		die("fuzz: cannot write %s", path);
}
