/* t/layer_event.c -- the event layer: exact counts, bytes, access patterns
 * and size histograms for a known sequence of calls; ffgetstats; two event
 * layers in one stack; trace lines; JSON summaries; the summary at exit of
 * a file never closed; asynchronous requests. */
#include "layer_common.h"

#include <sys/wait.h>

static void test_counts(void)
{
	char buf[4096], line[512], *log;
	struct ffio_stats st[4];
	unsigned long long calls, errs, bytes;
	int fd, n;

	memset(buf, 'a', sizeof buf);
	fd = ffopen(lt_path("counts.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644, "event.summary.bytes, sys");
	tap_ok(fd >= 0, "ffopen with event.summary.bytes");
	/* 4 sequential writes of 4 KiB, then 3 of 100 bytes every 10000. */
	for (int i = 0; i < 4; i++)
		if (ffwrite(fd, buf, 4096) != 4096)
			tap_diag("ffwrite: %s", strerror(errno));
	for (int i = 0; i < 3; i++)
		if (ffpwrite(fd, buf, 100, 20000 + 10000 * i) != 100)
			tap_diag("ffpwrite: %s", strerror(errno));
	/* 3 sequential reads of 1000 bytes from 0, one read past the end. */
	tap_is(ffseek(fd, 0, SEEK_SET), 0, "ffseek to 0");
	for (int i = 0; i < 3; i++)
		if (ffread(fd, buf, 1000) != 1000)
			tap_diag("ffread: %s", strerror(errno));
	tap_is(ffpread(fd, buf, 10, 50000), 0, "read past the end returns 0");
	tap_is(fffsync(fd), 0, "fffsync");

	n = ffgetstats(fd, st, 4);
	tap_is(n, 2, "ffgetstats: event and sys");
	tap_is_str(st[0].layer, "event", "first statistics are the event layer's");
	tap_is(st[0].position, 0, "event is at position 0");
	tap_is(st[0].count[FFIO_STAT_WRITE], 7, "stats: 7 writes");
	tap_is(st[0].bytes[FFIO_STAT_WRITE], 4 * 4096 + 300, "stats: write bytes");
	tap_is(st[0].count[FFIO_STAT_READ], 4, "stats: 4 reads");
	tap_is(st[0].bytes[FFIO_STAT_READ], 3000, "stats: read bytes");
	tap_is(st[0].count[FFIO_STAT_SYNC], 1, "stats: 1 sync");
	tap_is(st[0].count[FFIO_STAT_OPEN], 1, "stats: 1 open");
	tap_is(ffclose(fd), 0, "ffclose");

	log = lt_log_new();
	tap_is(lt_count(log, "event[0] of * (above sys) summary: "), 1, "one summary, labelled");
	tap_ok(strstr(log, lt_path("counts.dat")) != NULL, "summary names the file");
	tap_ok(lt_line(log, "  write ", line, sizeof line) &&
		       sscanf(line, " write %llu %llu %llu", &calls, &errs, &bytes) == 3 && calls == 7 &&
		       errs == 0 && bytes == 16684,
	       "write row: 7 calls, 0 errors, 16684 bytes");
	tap_ok(lt_line(log, "  read ", line, sizeof line) &&
		       sscanf(line, " read %llu %llu %llu", &calls, &errs, &bytes) == 3 && calls == 4 &&
		       errs == 0 && bytes == 3000,
	       "read row: 4 calls, 0 errors, 3000 bytes");
	tap_ok(lt_line(log, "  open ", line, sizeof line) && sscanf(line, " open %llu", &calls) == 1 && calls == 1,
	       "open row: 1 call");
	tap_ok(lt_line(log, "  fsync ", line, sizeof line) && sscanf(line, " fsync %llu", &calls) == 1 && calls == 1,
	       "fsync row: 1 call");
	tap_ok(lt_line(log, "  close ", line, sizeof line) && sscanf(line, " close %llu", &calls) == 1 && calls == 1,
	       "close row: 1 call");
	tap_ok(lt_line(log, "write pattern:", line, sizeof line) &&
		       strcmp(line, "  write pattern: 4 sequential, 2 strided (stride 10000), 1 random") == 0,
	       "write pattern: 4 sequential, 2 strided (stride 10000), 1 random");
	tap_ok(lt_line(log, "read pattern:", line, sizeof line) &&
		       strcmp(line, "  read pattern: 3 sequential, 0 strided, 1 random") == 0,
	       "read pattern: 3 sequential, 0 strided, 1 random");
	tap_ok(lt_line(log, "write sizes:", line, sizeof line) && strcmp(line, "  write sizes: 64:3 4k:4") == 0,
	       "write sizes: 64:3 4k:4");
	tap_ok(lt_line(log, "read sizes:", line, sizeof line) && strcmp(line, "  read sizes: 8:1 512:3") == 0,
	       "read sizes: 8:1 512:3");
	tap_ok(lt_count(log, "  aread ") == 0 && lt_count(log, "  truncate ") == 0, "operations not made are not listed");
	if (tap_failed)
		tap_diag("log:\n%s", log);
	free(log);
}

/* Two event layers in one stack: both summarise, each with its label and
 * its units. */
static void test_two_layers(void)
{
	char buf[2048], *log;
	int fd;

	memset(buf, 'b', sizeof buf);
	fd = ffopen(lt_path("two.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644,
		    "event.summary.bytes, event.summary.kbytes, sys");
	tap_ok(fd >= 0, "ffopen with two event layers");
	for (int i = 0; i < 2; i++)
		if (ffwrite(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
			tap_diag("ffwrite: %s", strerror(errno));
	tap_is(ffclose(fd), 0, "ffclose");
	log = lt_log_new();
	tap_is(lt_count(log, "event[0] of * (above event) summary: "), 1, "the upper event layer summarises");
	tap_is(lt_count(log, "event[1] of * (below event, above sys) summary: "), 1,
	       "the lower event layer summarises");
	tap_ok(strstr(log, "4096 ") != NULL && strstr(log, "4.000 ") != NULL, "bytes in bytes and in KiB");
	tap_is(lt_count(log, " KiB "), 1, "one summary in KiB");
	tap_is(lt_count(log, "  write pattern: 2 sequential, 0 strided, 0 random"), 2, "both saw 2 sequential writes");
	free(log);
}

static void test_trace(void)
{
	char *log;
	int fd;

	fd = ffopen(lt_path("trace.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644, "event.trace, sys");
	tap_ok(fd >= 0, "ffopen with event.trace");
	tap_is(ffpwrite(fd, "0123456789", 10, 0), 10, "pwrite 10 bytes at 0");
	tap_is(ffpwrite(fd, "0123456789", 5, 100), 5, "pwrite 5 bytes at 100");
	tap_is(ffclose(fd), 0, "ffclose");
	log = lt_log_new();
	tap_is(lt_count(log, "event[0] of * (above sys) trace: write off=0 size=10 res=10 time="), 1,
	       "trace line of the first write");
	tap_is(lt_count(log, "event[0] of * (above sys) trace: write off=100 size=5 res=5 time="), 1,
	       "trace line of the second write");
	tap_is(lt_count(log, "trace: open "), 1, "trace line of the open");
	tap_is(lt_count(log, "trace: close "), 1, "trace line of the close");
	tap_is(lt_count(log, " summary: "), 1, "trace also summarises");
	free(log);
}

static void test_json(void)
{
	char *log;
	int fd;

	ffio_logformat_json = 1;
	fd = ffopen(lt_path("json.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644, "event, sys");
	tap_ok(fd >= 0, "ffopen with event (defaults)");
	tap_is(ffpwrite(fd, "abc", 3, 0), 3, "pwrite 3 bytes");
	tap_is(ffpwrite(fd, "abc", 3, 3), 3, "pwrite 3 more");
	tap_is(ffclose(fd), 0, "ffclose");
	ffio_logformat_json = 0;
	log = lt_log_new();
	tap_ok(log[0] == '{' && strchr(log, '\n') == log + strlen(log) - 1 && log[strlen(log) - 2] == '}',
	       "one JSON object on one line");
	tap_is(lt_count(log, "\"event\":\"event[0] of * (above sys)\""), 1, "JSON label");
	tap_is(lt_count(log, "\"write\":{\"calls\":2,\"errors\":0,\"bytes\":6,"), 1, "JSON write counts");
	tap_is(lt_count(log, "\"write\":{\"sequential\":2,\"strided\":0,\"stride\":0,\"random\":0,\"sizes\":{\"2\":2}}"),
	       1, "JSON write pattern and sizes");
	tap_is(lt_count(log, "{") , lt_count(log, "}"), "JSON braces balance");
	free(log);
}

/* A file never closed is summarised at exit. */
static void test_exit(void)
{
	pid_t pid = fork();
	int status = 0;
	char *log;

	if (pid == 0) {
		int fd = ffopen(lt_path("exit.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644, "event.bytes, sys");
		if (fd < 0 || ffwrite(fd, "xyz", 3) != 3)
			_exit(1);
		exit(0);
	}
	tap_ok(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "child wrote without closing and exited");
	log = lt_log_new();
	tap_is(lt_count(log, " summary: "), 1, "its file was summarised at exit");
	tap_is(lt_count(log, "  write pattern: 1 sequential, 0 strided, 0 random"), 1, "with its write");
	free(log);
}

/* Around the cache: the upper layer sees what the application asked for,
 * the lower one what reached the file system. */
static void test_around_cache(void)
{
	char buf[4096], line[512], *log, *upper, *lower;
	unsigned long long calls = 0, errs, bytes = 0;
	int fd;

	memset(buf, 'c', sizeof buf);
	fd = ffopen(lt_path("cache.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644,
		    "event.bytes, cache:64k:4:0, event.bytes, sys");
	tap_ok(fd >= 0, "ffopen with event above and below cache");
	for (int i = 0; i < 16; i++)
		if (ffwrite(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
			tap_diag("ffwrite: %s", strerror(errno));
	tap_is(ffclose(fd), 0, "ffclose");
	log = lt_log_new();
	upper = strstr(log, "event[0] of * (above cache) summary: ");
	tap_ok(upper != NULL, "the upper layer is labelled above cache");
	lower = strstr(log, "event[2] of * (below cache, above sys) summary: ");
	tap_ok(lower != NULL, "the lower layer is labelled below cache");
	tap_ok(upper && lt_line(upper, "  write ", line, sizeof line) &&
		       sscanf(line, " write %llu %llu %llu", &calls, &errs, &bytes) == 3 && calls == 16 && bytes == 65536,
	       "the application made 16 writes of 64 KiB in all (%llu, %llu)", calls, bytes);
	calls = bytes = 0;
	tap_ok(lower && lt_line(lower, "  write ", line, sizeof line) &&
		       sscanf(line, " write %llu %llu %llu", &calls, &errs, &bytes) == 3 && calls >= 1 && calls < 16 &&
		       bytes == 65536,
	       "fewer, larger writes reached the file system, the same bytes (%llu, %llu)", calls, bytes);
	free(log);
}

static int done_calls;
static void on_done(struct ffio_req *r)
{
	(void)r;
	done_calls++;
}

static void test_async(void)
{
	char data[8192], back[8192], *log, line[512];
	struct iovec wiov = {data, sizeof data}, riov = {back, sizeof back};
	struct ffio_req w = {.op = FFIO_OP_WRITE, .iov = &wiov, .iovcnt = 1, .off = 0, .done = on_done};
	struct ffio_req r = {.op = FFIO_OP_READ, .iov = &riov, .iovcnt = 1, .off = 0, .done = on_done};
	struct ffio_req s = {.op = FFIO_OP_FSYNC, .done = on_done};
	unsigned long long calls, errs, bytes;
	int fd;

	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (char)(i * 7);
	fd = ffopen(lt_path("async.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644, "event.bytes, sys");
	tap_ok(fd >= 0, "ffopen for asynchronous requests");
	done_calls = 0;
	tap_is(lt_submit(fd, &w), 0, "submit a write");
	tap_is(lt_submit(fd, &r), 0, "submit a read");
	tap_is(lt_submit(fd, &s), 0, "submit an fsync");
	tap_is(lt_reap(fd, 0), 0, "reap");
	tap_is(done_calls, 3, "three completions reached the submitter");
	tap_ok(w.res == 8192 && r.res == 8192 && s.res == 0 && memcmp(data, back, sizeof data) == 0,
	       "results and data are right");
	tap_ok(w.done == on_done && w.data == NULL, "the request's done and data are restored");
	tap_is(ffclose(fd), 0, "ffclose");
	log = lt_log_new();
	tap_ok(lt_line(log, "  awrite ", line, sizeof line) &&
		       sscanf(line, " awrite %llu %llu %llu", &calls, &errs, &bytes) == 3 && calls == 1 && bytes == 8192,
	       "awrite row: 1 call, 8192 bytes");
	tap_ok(lt_line(log, "  aread ", line, sizeof line) &&
		       sscanf(line, " aread %llu %llu %llu", &calls, &errs, &bytes) == 3 && calls == 1 && bytes == 8192,
	       "aread row: 1 call, 8192 bytes");
	tap_ok(lt_line(log, "  afsync ", line, sizeof line) && sscanf(line, " afsync %llu", &calls) == 1 && calls == 1,
	       "afsync row: 1 call");
	tap_is(lt_count(log, "  write sizes: 8k:1"), 1, "asynchronous sizes in the histogram");
	free(log);
}

int main(void)
{
	lt_setup("event");
	tap_plan(73);
	test_counts();
	test_two_layers();
	test_trace();
	test_json();
	test_exit();
	test_async();
	test_around_cache();
	return tap_done();
}
