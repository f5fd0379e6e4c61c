/* t/share_writers.c -- several processes write interleaved records into
 * one file at the same time; the file must end up holding every writer's
 * records, as the kernel alone leaves it.  Run preloaded over a stack by
 * t/share_writers.sh (and raw, which checks the program itself).
 *
 * Usage: share_writers FILE WRITERS RECSIZE LAYOUT BEFORE ORDER SEED
 *   LAYOUT, BEFORE: see t/share_pattern.h
 *   ORDER   which writer closes first, second, ... ("102": writer 1, 0, 2)
 * The writers are forked children.  Every writer opens the file and writes
 * all its records before any of them closes; then they close one by one
 * in ORDER.  They wait for each other on a process-shared barrier, which
 * no library between them and the kernel sees: nothing but the closes
 * makes a cache write back.  The parent then reads the file through the
 * kernel and compares it with the records each writer was given.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "share_pattern.h"

static pthread_barrier_t *gate;

static int die(const char *what)
{
	fprintf(stderr, "share_writers: %s: %s\n", what, strerror(errno));
	return 2;
}

static int writer(const char *path, int w, int before, const char *order)
{
	int fd = open(path, O_RDWR);

	if (fd < 0)
		return die("writer open");
	if (share_write(w, before, share_fd_write_at, share_fd_read_at, &fd) < 0)
		return die("writer write");
	pthread_barrier_wait(gate); /* everyone has written */
	for (int turn = 0; turn < writers; turn++) {
		if (order[turn] - '0' == w && close(fd) < 0)
			return die("writer close");
		pthread_barrier_wait(gate);
	}
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
	int before = argv[5][0];
	if (writers < 1 || writers > MAX_WRITERS || (int)strlen(order) != writers || recsize < 1 ||
	    recsize > 65536)
		return fprintf(stderr, "share_writers: bad arguments\n"), 2;
	share_layout(strcmp(argv[4], "rand") == 0, strtoull(argv[7], NULL, 10));
	if (share_prepare(path, before) < 0)
		return 2;

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
	return share_check(path);
}
