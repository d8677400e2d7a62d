/* Unit tests for ir/util.c on bad input: mkdir_p on any path, read_file_max
 * on files over the limit, devices and pipes; strbuf_put_wrapped's breaks. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "util.h"

/* what holds; errno is shown if not (errors of the calls under test). */
#define check(ok, what) CHECKF((ok), "%s (errno %s)", (what), strerror(errno))

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int main(void)
{
	char tmp[] = "/tmp/aotc-test-util-XXXXXX";
	if (!mkdtemp(tmp))
		return 1;
	char p[256];

	errno = 0;
	check(mkdir_p("") < 0 && errno == ENOENT, "mkdir_p(\"\") fails with ENOENT");
	check(mkdir_p("/") == 0, "mkdir_p(\"/\")");
	check(mkdir_p("//") == 0, "mkdir_p(\"//\")");
	check(mkdir_p(".") == 0 && mkdir_p("./") == 0, "mkdir_p(\".\"), (\"./\")");
	snprintf(p, sizeof p, "%s/a//b///c/", tmp);
	check(mkdir_p(p) == 0 && is_dir(p), "mkdir_p with repeated and trailing slashes");
	snprintf(p, sizeof p, "%s/f", tmp);
	FILE *f = fopen(p, "w");
	fputs("0123456789", f);
	fclose(f);
	errno = 0;
	check(mkdir_p(p) < 0 && errno == ENOTDIR, "mkdir_p on a file: ENOTDIR");
	snprintf(p, sizeof p, "%s/f/sub", tmp);
	errno = 0;
	check(mkdir_p(p) < 0 && errno == ENOTDIR, "mkdir_p under a file: ENOTDIR");

	size_t len = 0;
	snprintf(p, sizeof p, "%s/f", tmp);
	char *s = read_file_max(p, &len, 10);
	check(s && len == 10 && !strcmp(s, "0123456789"), "read_file_max at the limit");
	free(s);
	errno = 0;
	s = read_file_max(p, &len, 9);
	check(!s && errno == EFBIG, "read_file_max over the limit: EFBIG");
	errno = 0;
	s = read_file_max("/dev/zero", &len, 100000);
	check(!s && errno == EFBIG, "read_file_max(/dev/zero): EFBIG");
	s = read_file_max("/dev/null", &len, 100000);
	check(s && len == 0 && !*s, "read_file_max(/dev/null): empty");
	free(s);
	errno = 0;
	s = read_file_max(tmp, &len, 100000);
	check(!s && errno == EISDIR, "read_file_max on a directory: EISDIR");

	/* Lines of at most 12 columns, continued at 2; an item longer than
	 * the width stands on a line of its own, never an empty line. */
	strbuf sb;
	strbuf_init(&sb);
	strbuf_puts(&sb, "list:");
	size_t col = 5;
	const char *items[] = {"aa,", "bb,", "cc,", "a-very-long-item,", "d"};
	for (int i = 0; i < 5; i++)
		strbuf_put_wrapped(&sb, &col, items[i], 2, 12);
	check(!strcmp(sb.data, "list: aa,\n   bb, cc,\n   a-very-long-item,\n   d") && col == 4,
	      "strbuf_put_wrapped breaks before the column, one item a line at least");
	strbuf_finish(&sb);

	/* "Did you mean": transpositions and case count little, far names
	 * are no suggestion, the name itself never comes back. */
	check(edit_distance("TILE", "TIEL") == 1, "edit_distance: a transposition is one edit");
	check(edit_distance("block_size", "BLOCK_SIZE") == 0, "edit_distance ignores case");
	check(edit_distance("blocksize", "block_size") == 1, "edit_distance: one insertion");
	check(edit_distance("", "abc") == 3, "edit_distance from empty");
	nearest near;
	nearest_init(&near, "blok_size");
	nearest_offer(&near, "BM");
	nearest_offer(&near, "block_size");
	nearest_offer(&near, "block_sizes");
	check(near.best && !strcmp(near.best, "block_size"), "nearest: the closest, the first of ties");
	nearest_init(&near, "N");
	nearest_offer(&near, "N");
	nearest_offer(&near, "NUM");
	check(!near.best, "nearest: not the name itself, nothing two edits from a 1-letter name");
	nearest_init(&near, "Q");
	nearest_offer(&near, "n");
	nearest_offer(&near, "q");
	check(near.best && !strcmp(near.best, "q"), "nearest: a short name only by its case");
	nearest_init(&near, "alpha");
	nearest_offer(&near, "beta");
	check(!near.best, "nearest: alpha is not beta");

	snprintf(p, sizeof p, "rm -rf '%s'", tmp);
	if (system(p) != 0)
		printf("cannot remove %s\n", tmp);
	return check_done();
}
