/* t/share_writers.c -- several processes write interleaved records into
 * one file at the same time; the file must end up holding every writer's
 * records, as the kernel alone leaves it.  Run preloaded over a stack by
 * t/share_writers.sh (and raw, which checks the program itself).
 *
 * Usage: share_writers FILE WRITERS RECSIZE LAYOUT BEFORE ORDER SEED
 *   LAYOUT  seq: record k belongs to writer k % WRITERS, written in order;
 *           rand: each record to a random writer, each writer's records in
 *           a random order
 *   BEFORE  none: the file is new; old: it holds older bytes, which the
 *           writers overwrite; read: as old, and each writer reads the
 *           whole file before it writes (its cache then knows the pages)
 *   ORDER   which writer closes first, second, ... ("102": writer 1, 0, 2)
 * The writers are forked children.  Every writer opens the file and writes
 * all its records before any of them closes; then they close one by one
 * in ORDER.  They wait for each other on a process-shared barrier, which
 * no library between them and the kernel sees: nothing but the closes
 * makes a cache write back.  The parent then reads the file raw (kernel
 * view) and compares it with the records each writer was given.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rng.h"

#define RECORDS 300
#define MAX_WRITERS 8

static int writers, recsize;
static int owner[RECORDS];   /* which writer writes record k */
static int slots[RECORDS];   /* the records in the order they are written */
static pthread_barrier_t *gate;

/* The byte of record k at i, as writer w writes it (never 0, never the
 * older content's byte). */
static unsigned char rec_byte(int w, int k, int i)
{
	return (unsigned char)(0x41 + w * 37 + k * 7 + i * 3) | 0x80;
}

static unsigned char old_byte(off_t at)
{
	return (unsigned char)(at * 13 % 101 + 1); /* below 0x80 */
}

static int die(const char *what)
{
	fprintf(stderr, "share_writers: %s: %s\n", what, strerror(errno));
	return 2;
}

/* The kernel's view of the file, whatever library is loaded. */
static ssize_t kernel_pread(int fd, void *buf, size_t n, off_t off)
{
	return syscall(SYS_pread64, fd, buf, n, off);
}

static int writer(const char *path, int w, int before, const char *order)
{
	size_t size = (size_t)RECORDS * (size_t)recsize;
	unsigned char *rec = malloc((size_t)recsize), *all = malloc(size);
	int fd = open(path, O_RDWR);

	if (!rec || !all || fd < 0)
		return die("writer open");
	if (before == 'r') { /* read all of it first */
		size_t got = 0;
		while (got < size) {
			ssize_t r = pread(fd, all + got, size - got, (off_t)got);
			if (r <= 0)
				return die("writer read");
			got += (size_t)r;
		}
	}
	for (int j = 0; j < RECORDS; j++) {
		int k = slots[j];
		if (owner[k] != w)
			continue;
		for (int i = 0; i < recsize; i++)
			rec[i] = rec_byte(w, k, i);
		if (pwrite(fd, rec, (size_t)recsize, (off_t)k * recsize) != recsize)
			return die("writer pwrite");
	}
	pthread_barrier_wait(gate); /* everyone has written */
	for (int turn = 0; turn < writers; turn++) {
		if (order[turn] - '0' == w && close(fd) < 0)
			return die("writer close");
		pthread_barrier_wait(gate);
	}
	free(rec);
	free(all);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 8) {
		fprintf(stderr, "usage: share_writers FILE WRITERS RECSIZE seq|rand none|old|read ORDER SEED\n");
		return 2;
	}
	const char *path = argv[1], *order = argv[6];
	writers = atoi(argv[2]);
	recsize = atoi(argv[3]);
	int random_layout = strcmp(argv[4], "rand") == 0, before = argv[5][0];
	rs = strtoull(argv[7], NULL, 10);
	if (writers < 1 || writers > MAX_WRITERS || (int)strlen(order) != writers || recsize < 1 ||
	    recsize > 65536)
		return fprintf(stderr, "share_writers: bad arguments\n"), 2;

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

	size_t size = (size_t)RECORDS * (size_t)recsize;
	unsigned char *want = malloc(size), *got = calloc(1, size + 1);
	if (!want || !got)
		return die("malloc");
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return die("create");
	for (size_t i = 0; i < size; i++)
		want[i] = old_byte((off_t)i);
	if (before != 'n' && pwrite(fd, want, size, 0) != (ssize_t)size)
		return die("write old");
	if (close(fd) < 0)
		return die("close");
	for (int k = 0; k < RECORDS; k++)
		for (int i = 0; i < recsize; i++)
			want[(size_t)k * (size_t)recsize + (size_t)i] = rec_byte(owner[k], k, i);

	gate = mmap(NULL, sizeof *gate, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pthread_barrierattr_t attr;
	if (gate == MAP_FAILED || pthread_barrierattr_init(&attr) ||
	    pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED) ||
	    pthread_barrier_init(gate, &attr, (unsigned)writers))
		return die("barrier");
	pid_t pid[MAX_WRITERS];
	for (int w = 0; w < writers; w++) {
		if ((pid[w] = fork()) < 0)
			return die("fork");
		if (pid[w] == 0)
			_exit(writer(path, w, before, order));
	}
	int bad = 0;
	for (int w = 0; w < writers; w++) {
		int st;
		if (waitpid(pid[w], &st, 0) < 0)
			return die("waitpid");
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad = 1;
	}
	if (bad)
		return fprintf(stderr, "share_writers: a writer failed\n"), 2;

	/* The kernel's view of the file. */
	fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return die("check open");
	ssize_t n = kernel_pread(fd, got, size + 1, 0);
	if (n < 0)
		return die("check read");
	close(fd);
	size_t wrong = 0, first = size;
	for (size_t i = 0; i < size; i++)
		if (got[i] != want[i] && wrong++ == 0)
			first = i;
	if ((size_t)n != size || wrong) {
		printf("size %zd (want %zu), %zu bytes wrong", n, size, wrong);
		if (wrong)
			printf(", first at %zu (record %zu of writer %d): 0x%02x, want 0x%02x", first,
			       first / (size_t)recsize, owner[first / (size_t)recsize], got[first], want[first]);
		printf("\n");
		return 1;
	}
	printf("%zu bytes as written\n", size);
	return 0;
}
