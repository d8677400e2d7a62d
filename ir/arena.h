/* Bump allocator. Everything a parsed kernel (or a tuning run) owns lives in
 * one arena and dies with it: arena_finish() frees all of it at once. */
#ifndef AOTC_ARENA_H
#define AOTC_ARENA_H

#include <stdarg.h>
#include <stddef.h>

typedef struct arena_block arena_block;

typedef struct arena {
	arena_block *head;
} arena;

void arena_init(arena *a);
void arena_finish(arena *a);              /* frees every allocation */

/* Zeroed, aligned for any type; never returns NULL (aborts on OOM). */
void *arena_alloc(arena *a, size_t size);
char *arena_strdup(arena *a, const char *s);
char *arena_strndup(arena *a, const char *s, size_t n);
char *arena_printf(arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Grows *items (capacity *cap) to hold at least n elements of size elem;
 * old contents are copied, the old block is left to the arena. */
void arena_grow(arena *a, void **items, size_t *cap, size_t n, size_t elem);

#define ARENA_PUSH(a, vec, count, cap, value)                                  \
	do {                                                                   \
		arena_grow((a), (void **)&(vec), &(cap), (count) + 1,          \
		           sizeof *(vec));                                     \
		(vec)[(count)++] = (value);                                    \
	} while (0)

#endif
