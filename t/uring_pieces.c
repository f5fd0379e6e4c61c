/* t/uring_pieces.c -- asynchronous buffered writes longer than 512 KiB go
 * to the kernel as several SQEs: the request completes once, with its
 * full count, the bytes exact also for a vector whose entries straddle
 * the cuts and for many such requests at a small depth; a piece cut short
 * (RLIMIT_FSIZE) fails the request with EFBIG after exactly the bytes
 * below the limit were written; closing the descriptor the requests were
 * made with while they wait in the kernel (the file still open through a
 * dup) changes nothing, and no byte reaches a file that takes its number. */
#include "uring_common.h"
#include <signal.h>
#include <sys/resource.h>

#define PIECE (512 * 1024)
#define LEN (5 * PIECE / 2 + 1) /* 1.25 MiB + 1: three pieces */
#define NV 3000                 /* bytes per vector entry */

static unsigned char want[LEN], got[LEN + 1];

static int file_is(const char *path, size_t n)
{
	int fd = open(path, O_RDONLY);
	ssize_t r = fd >= 0 ? pread(fd, got, sizeof got, 0) : -1;
	if (fd >= 0)
		close(fd);
	return r == (ssize_t)n && memcmp(got, want, n) == 0;
}

static void vector_write(void)
{
	static struct iovec iov[(LEN + NV - 1) / NV];
	static struct ut_req w;
	int n = 0, fd = ffopen(ut_path("vec"), O_RDWR | O_CREAT | O_TRUNC, 0644, "uring:4");
	struct ffio_layer *b = ut_bottom(fd);

	for (size_t at = 0; at < LEN; at += NV)
		iov[n++] = (struct iovec){want + at, LEN - at < NV ? LEN - at : NV};
	ut_prep(&w, FFIO_OP_WRITE, NULL, 0, 0);
	w.r.iov = iov;
	w.r.iovcnt = n;
	ut_completed = 0;
	tap_is(ffio_below_submit(ut_at(b), &w.r), 0, "submit a write of %d vector entries, 1.25 MiB + 1", n);
	tap_is(ffio_below_commit(ut_at(b)), 0, "commit");
	tap_is(ut_reap_until(b, 1), 0, "reap");
	tap_ok(w.r.res == LEN && w.ndone == 1, "completed once with its full count (%zd)", w.r.res);
	tap_is(ffclose(fd), 0, "close");
	tap_ok(file_is(ut_path("vec"), LEN), "the file holds the bytes");
}

/* 8 requests of 1.25 MiB + 1 at depth 2, back to back in the file */
static void many_at_depth(void)
{
	static struct ut_req w[8];
	static unsigned char big[8 * (size_t)LEN];
	int fd = ffopen(ut_path("many"), O_RDWR | O_CREAT | O_TRUNC, 0644, "uring:2");
	struct ffio_layer *b = ut_bottom(fd);
	int bad = 0;

	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (unsigned char)(i * 13 + i / 8191);
	ut_completed = 0;
	for (int i = 0; i < 8; i++) {
		ut_prep(&w[i], FFIO_OP_WRITE, big + (size_t)i * LEN, LEN, (off_t)i * LEN);
		bad += ffio_below_submit(ut_at(b), &w[i].r) < 0;
	}
	bad += ffio_below_commit(ut_at(b)) < 0 || ut_reap_until(b, 8) < 0;
	for (int i = 0; i < 8; i++)
		bad += w[i].r.res != LEN || w[i].ndone != 1;
	tap_is(bad, 0, "8 writes of 1.25 MiB + 1 at depth 2 complete once, in full");
	tap_is(ffclose(fd), 0, "close");
	int pfd = open(ut_path("many"), O_RDONLY), same = pfd >= 0;
	for (int i = 0; i < 8 && same; i++)
		same = pread(pfd, got, LEN, (off_t)i * LEN) == LEN && memcmp(got, big + (size_t)i * LEN, LEN) == 0;
	if (pfd >= 0)
		close(pfd);
	tap_ok(same, "the file holds all of them");
}

static void short_piece(void)
{
	static struct ut_req w;
	struct rlimit old, lim;
	int fd = ffopen(ut_path("short"), O_RDWR | O_CREAT | O_TRUNC, 0644, "uring:4");
	struct ffio_layer *b = ut_bottom(fd);

	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = (struct rlimit){.rlim_cur = 700000, .rlim_max = old.rlim_max};
	if (setrlimit(RLIMIT_FSIZE, &lim) < 0) {
		for (int i = 0; i < 3; i++)
			tap_skip("setrlimit failed");
		ffclose(fd);
		return;
	}
	ut_prep(&w, FFIO_OP_WRITE, want, LEN, 0);
	ut_completed = 0;
	int err = ffio_below_submit(ut_at(b), &w.r) < 0 || ffio_below_commit(ut_at(b)) < 0 ||
		  ut_reap_until(b, 1) < 0;
	setrlimit(RLIMIT_FSIZE, &old);
	tap_ok(!err && w.r.res == -EFBIG && w.ndone == 1, "a write past the size limit fails once with EFBIG (%zd)",
	       w.r.res);
	tap_is(ffclose(fd), 0, "close");
	tap_ok(file_is(ut_path("short"), 700000), "the file holds the first 700000 bytes");
}

/* The descriptor that requests were submitted with is closed (the file
 * stays open through a dup) while they are queued in the kernel, and its
 * number is reused by another file at once: every byte goes to the first
 * file, none to the other. */
static void close_while_queued(void)
{
	static struct ut_req w[4];
	char other[300];
	int fd = ffopen(ut_path("queued"), O_RDWR | O_CREAT | O_TRUNC, 0644, "uring:8");
	struct ffio_layer *b = ut_bottom(fd);
	int keep = dup(fd), bad = 0;

	if (keep >= 0 && !ffio_is_managed(keep))
		bad += ffio_fd_dup(fd, keep) < 0;
	ut_completed = 0;
	for (int i = 0; i < 4; i++) {
		ut_prep(&w[i], FFIO_OP_WRITE, want, LEN, (off_t)i * LEN);
		bad += ffio_below_submit(ut_at(b), &w[i].r) < 0;
	}
	bad += ffio_below_commit(ut_at(b)) < 0;
	bad += ffclose(fd) < 0; /* fd was the file's descriptor below */
	snprintf(other, sizeof other, "%s", ut_path("other"));
	int ofd = open(other, O_RDWR | O_CREAT | O_TRUNC, 0644); /* takes fd's number */
	bad += ut_reap_until(b, 4) < 0;
	for (int i = 0; i < 4; i++)
		bad += w[i].r.res != LEN;
	tap_is(bad, 0, "4 writes of 1.25 MiB + 1 complete in full after their descriptor was closed");
	struct stat st;
	tap_ok(ofd >= 0 && fstat(ofd, &st) == 0 && st.st_size == 0,
	       "the file that took the descriptor's number got nothing (%lld bytes)", ofd >= 0 && fstat(ofd, &st) == 0 ? (long long)st.st_size : -1LL);
	if (ofd >= 0)
		close(ofd);
	tap_is(ffclose(keep), 0, "close the dup");
	int pfd = open(ut_path("queued"), O_RDONLY), same = pfd >= 0;
	for (int i = 0; i < 4 && same; i++)
		same = pread(pfd, got, LEN, (off_t)i * LEN) == LEN && memcmp(got, want, LEN) == 0;
	if (pfd >= 0)
		close(pfd);
	tap_ok(same, "the file holds all four");
}

int main(void)
{
	tap_plan(6 + 3 + 3 + 4);
	ut_mkdir("uring_pieces");
	for (size_t i = 0; i < LEN; i++)
		want[i] = (unsigned char)(i * 7 + i / 4093);
	vector_write();
	many_at_depth();
	short_piece();
	close_while_queued();
	return tap_done();
}
