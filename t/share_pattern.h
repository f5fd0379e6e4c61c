/* t/share_pattern.h -- the records that several writers put into one file
 * (t/share_writers: forked processes, t/share_ranks: MPI ranks): who
 * writes which record, in what order, with which bytes, and the check of
 * the file they leave, read through the kernel alone.
 *
 *   LAYOUT  seq: record k belongs to writer k % WRITERS, written in order;
 *           rand: each record to a random writer, each writer's records in
 *           a random order
 *   BEFORE  none: the file is new; old: it holds older bytes, which the
 *           writers overwrite; read: as old, and each writer reads the
 *           whole file before it writes (its cache then knows the pages)
 */
#ifndef FFIO_T_SHARE_PATTERN_H
#define FFIO_T_SHARE_PATTERN_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rng.h"

#define RECORDS 300
#define MAX_WRITERS 8

static int writers, recsize;
static int owner[RECORDS]; /* which writer writes record k */
static int slots[RECORDS]; /* the records in the order they are written */

/* The byte of record k at i, as writer w writes it (never 0, never the
 * older content's byte). */
static unsigned char rec_byte(int w, int k, int i)
{
	return (unsigned char)(0x41 + w * 37 + k * 7 + i * 3) | 0x80;
}

static unsigned char old_byte(size_t at)
{
	return (unsigned char)(at * 13 % 101 + 1); /* below 0x80 */
}

static size_t share_size(void)
{
	return (size_t)RECORDS * (size_t)recsize;
}

/* Who writes what, in which order, from the layout and the seed. */
static void share_layout(int random_layout, uint64_t seed)
{
	rs = seed;
	for (int k = 0; k < RECORDS; k++) {
		owner[k] = random_layout ? (int)rnd(writers) : k % writers;
		slots[k] = k;
	}
	if (random_layout)
		for (int k = RECORDS - 1; k > 0; k--) {
			int j = (int)rnd(k + 1), t = slots[k];
			slots[k] = slots[j];
			slots[j] = t;
		}
}

/* The file made new, holding the older bytes unless before is 'n'.  0, or
 * -1 with a message. */
static int share_prepare(const char *path, int before)
{
	size_t size = share_size();
	unsigned char *old = malloc(size);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), bad = !old || fd < 0;

	for (size_t i = 0; !bad && i < size; i++)
		old[i] = old_byte(i);
	if (!bad && before != 'n' && pwrite(fd, old, size, 0) != (ssize_t)size)
		bad = 1;
	if (fd >= 0 && close(fd) < 0)
		bad = 1;
	free(old);
	if (bad)
		fprintf(stderr, "share: cannot prepare %s: %s\n", path, strerror(errno));
	return bad ? -1 : 0;
}

/* write_at and read_at of share_write for a descriptor (ctx: an int *). */
static int share_fd_write_at(void *ctx, const void *buf, size_t n, off_t off)
{
	return pwrite(*(int *)ctx, buf, n, off) == (ssize_t)n ? 0 : -1;
}

static int share_fd_read_at(void *ctx, void *buf, size_t n, off_t off)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = pread(*(int *)ctx, (char *)buf + got, n - got, off + (off_t)got);
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* Writer w's records through write_at(ctx, buf, n, off) (0 or -1); the
 * whole file read first through read_at when before is 'r'. */
static int share_write(int w, int before, int (*write_at)(void *, const void *, size_t, off_t),
		       int (*read_at)(void *, void *, size_t, off_t), void *ctx)
{
	unsigned char *rec = malloc((size_t)recsize), *all = malloc(share_size());
	int bad = !rec || !all || (before == 'r' && read_at(ctx, all, share_size(), 0) < 0);

	for (int j = 0; j < RECORDS && !bad; j++) {
		int k = slots[j];
		if (owner[k] != w)
			continue;
		for (int i = 0; i < recsize; i++)
			rec[i] = rec_byte(w, k, i);
		bad = write_at(ctx, rec, (size_t)recsize, (off_t)k * recsize) < 0;
	}
	free(rec);
	free(all);
	return bad ? -1 : 0;
}

/* The file as the kernel has it against what the writers wrote: prints
 * one line, returns 0 when every byte is right. */
static int share_check(const char *path)
{
	size_t size = share_size(), wrong = 0, first = size;
	unsigned char *got = calloc(1, size + 1);
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);
	ssize_t n = got && fd >= 0 ? syscall(SYS_pread64, fd, got, size + 1, (off_t)0) : -1;

	if (fd >= 0)
		syscall(SYS_close, fd);
	if (n < 0) {
		printf("cannot read %s back: %s\n", path, strerror(errno));
		free(got);
		return 1;
	}
	for (size_t i = 0; i < size; i++) {
		size_t k = i / (size_t)recsize;
		if (got[i] != rec_byte(owner[k], (int)k, (int)(i % (size_t)recsize)) && wrong++ == 0)
			first = i;
	}
	if ((size_t)n != size || wrong) {
		printf("size %zd (want %zu), %zu bytes wrong", n, size, wrong);
		if (wrong)
			printf(", first at %zu (record %zu of writer %d): 0x%02x, want 0x%02x", first,
			       first / (size_t)recsize, owner[first / (size_t)recsize], got[first],
			       rec_byte(owner[first / (size_t)recsize], (int)(first / (size_t)recsize),
					(int)(first % (size_t)recsize)));
		printf("\n");
		free(got);
		return 1;
	}
	printf("%zu bytes as written\n", size);
	free(got);
	return 0;
}

#endif
