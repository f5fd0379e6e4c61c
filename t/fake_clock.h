/* t/fake_clock.h -- ffio's clock (ffio_now_ns) in a test program linked
 * with the core: the system's, or, while fake_clock is set, 1 us a
 * reading, so that no load looks slow and the cache never takes a file
 * for one from the device (cache_note_load) by chance: a page faulted in
 * for the first time costs 12 us on some machines.  Only for programs
 * whose stacks time nothing else (the delay layer sleeps by this clock). */
#ifndef FFIO_TEST_FAKE_CLOCK_H
#define FFIO_TEST_FAKE_CLOCK_H

#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int fake_clock;

int clock_gettime(clockid_t id, struct timespec *ts)
{
	static uint64_t us;
	if (!fake_clock)
		return (int)syscall(SYS_clock_gettime, id, ts);
	us++;
	ts->tv_sec = (time_t)(us / 1000000);
	ts->tv_nsec = (long)(us % 1000000) * 1000;
	return 0;
}

#endif
