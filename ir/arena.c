#include "arena.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Under AddressSanitizer every allocation is followed by a poisoned red
 * zone, and a block's free space is poisoned, so that an overrun of one
 * arena object is reported as it would be for malloc'd memory (tests/fuzz). */
#if defined(__SANITIZE_ADDRESS__)
#define ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_ASAN 1
#endif
#endif
#ifdef ARENA_ASAN
#include <sanitizer/asan_interface.h>
enum { REDZONE = 16 };
#else
#define ASAN_POISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
enum { REDZONE = 0 };
#endif

struct arena_block {
	arena_block *next;
	size_t used, size;
	max_align_t data[];
};

enum { BLOCK_SIZE = 64 * 1024 };

void arena_init(arena *a) { a->head = NULL; }

void arena_finish(arena *a)
{
	arena_block *b = a->head;
	while (b) {
		arena_block *next = b->next;
		ASAN_UNPOISON_MEMORY_REGION(b->data, b->size);
		free(b);
		b = next;
	}
	a->head = NULL;
}

void *arena_alloc(arena *a, size_t size)
{
	size_t align = sizeof(max_align_t), want = size;
	size = (size + REDZONE + align - 1) / align * align;
	arena_block *b = a->head;
	if (!b || b->size - b->used < size) {
		size_t cap = size > BLOCK_SIZE ? size : BLOCK_SIZE;
		b = xmalloc(sizeof *b + cap);
		b->used = 0;
		b->size = cap;
		ASAN_POISON_MEMORY_REGION(b->data, cap);
		/* A large one-off block goes behind the current one so the
		 * current block's free space is not wasted. */
		if (a->head && cap > BLOCK_SIZE) {
			b->next = a->head->next;
			a->head->next = b;
		} else {
			b->next = a->head;
			a->head = b;
		}
	}
	void *p = (char *)b->data + b->used;
	b->used += size;
	ASAN_UNPOISON_MEMORY_REGION(p, want);
	memset(p, 0, want);
	return p;
}

char *arena_strndup(arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *arena_strdup(arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_printf(arena *a, const char *fmt, ...)
{
	strbuf sb;
	strbuf_init(&sb);
	va_list ap;
	va_start(ap, fmt);
	strbuf_vprintf(&sb, fmt, ap);
	va_end(ap);
	char *p = arena_strndup(a, sb.data, sb.len);
	strbuf_finish(&sb);
	return p;
}

void arena_grow(arena *a, void **items, size_t *cap, size_t n, size_t elem)
{
	if (n <= *cap)
		return;
	size_t ncap = *cap ? *cap * 2 : 4;
	while (ncap < n)
		ncap *= 2;
	void *p = arena_alloc(a, ncap * elem);
	if (*items && *cap)
		memcpy(p, *items, *cap * elem);
	*items = p;
	*cap = ncap;
}
