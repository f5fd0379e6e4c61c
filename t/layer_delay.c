/* t/layer_delay.c -- the delay layer: every request costs at least its
 * latency plus bytes/bandwidth of wall time (lower bounds only: the delay
 * is a guarantee), data passes unchanged, asynchronous requests are handed
 * back only from reap and after their simulated time. */
#include "layer_common.h"

static uint64_t elapsed_ms(uint64_t t0)
{
	return (ffio_now_ns() - t0) / 1000000u;
}

static void test_latency(void)
{
	char buf[10];
	int fd = ffopen(lt_path("l.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644, "delay:2ms:0, sys");
	uint64_t t0;
	int ok = 1;

	tap_ok(fd >= 0, "ffopen with delay:2ms:0");
	t0 = ffio_now_ns();
	for (int i = 0; i < 10; i++)
		ok &= ffpwrite(fd, "0123456789", 10, 10 * i) == 10;
	for (int i = 0; i < 10; i++)
		ok &= ffpread(fd, buf, 10, 10 * i) == 10 && memcmp(buf, "0123456789", 10) == 0;
	tap_ok(ok, "20 requests pass with their data");
	tap_ok(elapsed_ms(t0) >= 40, "20 requests at 2 ms took at least 40 ms (%llu ms)",
	       (unsigned long long)elapsed_ms(t0));
	/* A late wake-up is credited to the next request, so only the running
	 * total is a guarantee: 21 requests (the fsync too) at 2 ms. */
	tap_is(fffsync(fd), 0, "fffsync");
	tap_ok(elapsed_ms(t0) >= 42, "an fsync costs its latency too (%llu ms in all)",
	       (unsigned long long)elapsed_ms(t0));
	tap_is(ffclose(fd), 0, "ffclose");
}

static void test_bandwidth(void)
{
	static char buf[102400];
	int fd = ffopen(lt_path("b.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644, "delay:latency=0:bandwidth=1m, sys");
	uint64_t t0;

	tap_ok(fd >= 0, "ffopen with delay:latency=0:bandwidth=1m");
	t0 = ffio_now_ns();
	tap_is(ffpwrite(fd, buf, sizeof buf, 0), (long long)sizeof buf, "write 100 KiB");
	tap_ok(elapsed_ms(t0) >= 97, "100 KiB at 1 MiB/s took at least 97 ms (%llu ms)",
	       (unsigned long long)elapsed_ms(t0));
	tap_is(ffclose(fd), 0, "ffclose");
}

static int done_calls;
static void on_done(struct ffio_req *r)
{
	(void)r;
	done_calls++;
}

static void test_async(const char *spec)
{
	char data[4][64], back[64];
	struct iovec iov[4];
	struct ffio_req req[4];
	int fd = ffopen(lt_path("a.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644, spec);
	uint64_t t0;
	int ok = 1;

	tap_ok(fd >= 0, "ffopen with %s", spec);
	done_calls = 0;
	t0 = ffio_now_ns();
	for (int i = 0; i < 4; i++) {
		memset(data[i], 'A' + i, sizeof data[i]);
		iov[i] = (struct iovec){data[i], sizeof data[i]};
		req[i] = (struct ffio_req){.op = FFIO_OP_WRITE, .iov = &iov[i], .iovcnt = 1,
					   .off = 64 * i, .done = on_done};
		ok &= lt_submit(fd, &req[i]) == 0;
	}
	tap_ok(ok, "4 writes submitted");
	tap_is(done_calls, 0, "none is handed back before reap");
	tap_is(lt_reap(fd, 4), 4, "reap hands back 4");
	tap_is(done_calls, 4, "4 completions");
	tap_ok(elapsed_ms(t0) >= 5, "after at least their latency (%llu ms)", (unsigned long long)elapsed_ms(t0));
	ok = 1;
	for (int i = 0; i < 4; i++)
		ok &= req[i].res == 64 && req[i].done == on_done && req[i].data == NULL;
	tap_ok(ok, "results 64 each, done and data restored");
	tap_is(ffpread(fd, back, 64, 128), 64, "read back");
	tap_ok(memcmp(back, data[2], 64) == 0, "the data is the third write's");

	/* One left in flight is handed back at close. */
	done_calls = 0;
	ok = lt_submit(fd, &req[0]) == 0;
	tap_ok(ok, "one more submitted");
	tap_is(ffclose(fd), 0, "ffclose");
	tap_is(done_calls, 1, "it was handed back at close");
}

int main(void)
{
	lt_setup("delay");
	tap_plan(34);
	test_latency();
	test_bandwidth();
	test_async("delay:5ms:0, sys");
	test_async("delay:5ms:0, uring:8");
	return tap_done();
}
