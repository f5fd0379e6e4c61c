/* t/rel_threads.c -- many threads at once on managed files, checked byte
 * for byte.  A plain program (not linked with libffio): rel_threads.sh runs
 * it preloaded, and also builds it together with the library's sources
 * under ThreadSanitizer.
 *
 *   rel_threads DIR THREADS OPS
 *
 * Shared descriptor: every thread pwrites records to its own interleaved,
 * unaligned slots of one file opened once (1000-byte records, slot k of
 * thread t at (k * THREADS + t) * 1000), preads them back at once, and
 * now and then fsyncs the shared descriptor; a dup of it is used for half
 * the reads.  Separate descriptors: every thread also writes its own file
 * with write(), seeks back and reads it, and closes and reopens it, checking
 * what is on it after each reopen.  At the end the shared file is reopened
 * and every slot checked against the last generation written to it.
 * Prints TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REC 1000
#define SLOTS 64
#define MAXT 64

static const char *dir;
static int nthreads, nops, shared_fd, shared_dup;
static unsigned char last_gen[MAXT][SLOTS]; /* each written by its own thread only */

struct result {
	long ops, errors, mismatches;
};

static void fill(unsigned char *b, int t, int k, int gen)
{
	for (int i = 0; i < REC; i++)
		b[i] = (unsigned char)(t * 31 + k * 7 + gen * 101 + i);
}

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *worker(void *arg)
{
	int t = (int)(long)arg;
	struct result *res = calloc(1, sizeof *res);
	unsigned char b[REC], got[REC];
	char path[512];
	uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(t + 1);
	long own_len = 0;
	int fd;

	if (!res)
		return NULL;
	snprintf(path, sizeof path, "%s/own%d.dat", dir, t);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		res->errors++;
		return res;
	}
	for (int op = 0; op < nops; op++) {
		unsigned r = (unsigned)(next(&rng) % 100);
		res->ops++;
		if (r < 50) { /* shared file: write a slot, read it back */
			int k = (int)(next(&rng) % SLOTS), gen = last_gen[t][k] % 255 + 1;
			off_t off = ((off_t)k * nthreads + t) * REC;
			fill(b, t, k, gen);
			if (pwrite(shared_fd, b, REC, off) != REC) {
				res->errors++;
				continue;
			}
			last_gen[t][k] = (unsigned char)gen;
			if (pread(r & 1 ? shared_dup : shared_fd, got, REC, off) != REC)
				res->errors++;
			else if (memcmp(got, b, REC) != 0)
				res->mismatches++;
		} else if (r < 55) {
			if (fsync(shared_fd) < 0)
				res->errors++;
		} else if (r < 85) { /* own file: append a record with write */
			fill(b, t, (int)(own_len / REC) % SLOTS, 0);
			if (write(fd, b, REC) != REC)
				res->errors++;
			else
				own_len += REC;
		} else if (r < 95) { /* own file: read a record at the position */
			if (own_len == 0)
				continue;
			long k = (long)(next(&rng) % (uint64_t)(own_len / REC));
			if (lseek(fd, k * REC, SEEK_SET) != k * REC || read(fd, got, REC) != REC) {
				res->errors++;
			} else {
				fill(b, t, (int)k % SLOTS, 0);
				if (memcmp(got, b, REC) != 0)
					res->mismatches++;
			}
			if (lseek(fd, 0, SEEK_END) != own_len)
				res->errors++;
		} else { /* own file: close, reopen, check its size and last record */
			struct stat st;
			if (close(fd) < 0)
				res->errors++;
			fd = open(path, O_RDWR | O_APPEND);
			if (fd < 0) {
				res->errors++;
				return res;
			}
			if (fstat(fd, &st) < 0 || st.st_size != own_len)
				res->errors++;
			if (own_len >= REC) {
				fill(b, t, (int)(own_len / REC - 1) % SLOTS, 0);
				if (pread(fd, got, REC, own_len - REC) != REC)
					res->errors++;
				else if (memcmp(got, b, REC) != 0)
					res->mismatches++;
			}
		}
	}
	if (close(fd) < 0)
		res->errors++;
	return res;
}

int main(int argc, char **argv)
{
	pthread_t th[MAXT];
	char path[512];
	long ops = 0, errors = 0, mismatches = 0, bad_slots = 0;
	int n = 0;

	if (argc < 4)
		return 2;
	dir = argv[1];
	nthreads = atoi(argv[2]);
	nops = atoi(argv[3]);
	if (nthreads < 1 || nthreads > MAXT)
		return 2;
	snprintf(path, sizeof path, "%s/shared.dat", dir);
	shared_fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	shared_dup = dup(shared_fd);
	printf("1..4\n");
	if (shared_fd < 0 || shared_dup < 0) {
		printf("not ok 1 - open %s: %s\n", path, strerror(errno));
		return 1;
	}
	for (int t = 0; t < nthreads; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)(long)t) != 0)
			return 1;
	for (int t = 0; t < nthreads; t++) {
		struct result *res;
		pthread_join(th[t], (void **)&res);
		if (!res) {
			errors++;
			continue;
		}
		ops += res->ops;
		errors += res->errors;
		mismatches += res->mismatches;
		free(res);
	}
	int c1 = close(shared_dup), c2 = close(shared_fd);
	printf("%s %d - %d threads, %ld operations, no call failed (%ld failed)\n", errors ? "not ok" : "ok", ++n,
	       nthreads, ops, errors);
	printf("%s %d - every read saw the data just written (%ld mismatches)\n", mismatches ? "not ok" : "ok", ++n,
	       mismatches);
	printf("%s %d - close of the shared descriptor and its dup\n", c1 || c2 ? "not ok" : "ok", ++n);
	int fd = open(path, O_RDONLY);
	unsigned char b[REC], got[REC];
	for (int t = 0; t < nthreads; t++)
		for (int k = 0; k < SLOTS; k++) {
			if (!last_gen[t][k])
				continue;
			fill(b, t, k, last_gen[t][k]);
			if (fd < 0 || pread(fd, got, REC, ((off_t)k * nthreads + t) * REC) != REC ||
			    memcmp(got, b, REC) != 0)
				bad_slots++;
		}
	if (fd >= 0)
		close(fd);
	printf("%s %d - the shared file holds every slot's last record (%ld wrong)\n", bad_slots ? "not ok" : "ok",
	       ++n, bad_slots);
	return errors || mismatches || c1 || c2 || bad_slots;
}
