/* The fuzz targets' main() when not fuzzing: every file named on the
 * command line, or in a directory named there (sorted, dot files skipped),
 * goes through LLVMFuzzerTestOneInput once, in a buffer of exactly its size
 * as libFuzzer gives it. Seeds and reproducers so stay regression tests of
 * the normal and the sanitized build. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "util.h"

static int run_file(const char *path)
{
	size_t len;
	char *text = read_file(path, &len);
	if (!text) {
		fprintf(stderr, "replay: cannot read %s: %s\n", path, strerror(errno));
		return 1;
	}
	uint8_t *data = xmalloc(len ? len : 1);
	memcpy(data, text, len);
	free(text);
	LLVMFuzzerTestOneInput(data, len);
	free(data);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, int *count)
{
	DIR *dp = opendir(dir);
	if (!dp) {
		fprintf(stderr, "replay: cannot open %s: %s\n", dir, strerror(errno));
		return 1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(dp))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap)
			names = xrealloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
		names[n++] = xstrdup(e->d_name);
	}
	closedir(dp);
	if (n)
		qsort(names, n, sizeof *names, cmp);
	int failed = 0;
	for (size_t i = 0; i < n; i++) {
		strbuf sb;
		strbuf_init(&sb);
		strbuf_printf(&sb, "%s/%s", dir, names[i]);
		struct stat st;
		if (stat(sb.data, &st) == 0 && S_ISREG(st.st_mode)) {
			failed |= run_file(sb.data);
			++*count;
		}
		strbuf_finish(&sb);
		free(names[i]);
	}
	free(names);
	return failed;
}

int main(int argc, char **argv)
{
	int failed = 0, count = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			failed |= run_dir(argv[i], &count);
		} else {
			failed |= run_file(argv[i]);
			count++;
		}
	}
	printf("replay: %d input%s\n", count, count == 1 ? "" : "s");
	return failed;
}
