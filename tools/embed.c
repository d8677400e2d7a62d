/* Build helper: embed.c SYMBOL INPUT OUTPUT writes a C file defining
 *   const char SYMBOL[];       the bytes of INPUT plus a NUL
 *   const size_t SYMBOL_len;   the byte count without it
 * so headers aotc hands to libclang travel inside the binary. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: embed SYMBOL INPUT OUTPUT\n");
		return 2;
	}
	FILE *in = fopen(argv[2], "rb");
	FILE *out = fopen(argv[3], "w");
	if (!in || !out) {
		perror("embed");
		return 1;
	}
	fprintf(out, "#include <stddef.h>\nconst char %s[] = {\n", argv[1]);
	size_t n = 0;
	int c;
	while ((c = fgetc(in)) != EOF) {
		fprintf(out, "%d,%s", c, ++n % 20 ? "" : "\n");
	}
	fprintf(out, "0};\nconst size_t %s_len = %zu;\n", argv[1], n);
	fclose(in);
	return fclose(out) == 0 ? 0 : 1;
}
