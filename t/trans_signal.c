/* t/trans_signal.c -- a signal handler's write is no place to flush.
 *
 * A timer's handler writes a byte to a self-pipe, as event loops do,
 * while the program writes small records to FILE (cached, dirty) and
 * calls malloc and free.  Had ffio flushed the files for the handler's
 * write (a message to another process, had it not been in a handler), it
 * would take locks and allocate in the middle of whatever the handler
 * interrupted: malloc's heap breaks, or the process waits for itself.
 * The file must then hold exactly the records last written at each place.
 *
 * Usage: trans_signal FILE   (prints "ok" or what differs; exit 0 when ok) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define ROUNDS 3000000
#define SPAN (1 << 20) /* records wrap around in the first MiB */

static int self_pipe[2];

static void on_timer(int sig)
{
	char c = (char)sig;
	(void)!write(self_pipe[1], &c, 1);
}

static char record_byte(long i)
{
	return (char)('a' + i % 26);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	struct sigaction sa = {.sa_handler = on_timer, .sa_flags = SA_RESTART};
	struct itimerval every = {{0, 20}, {0, 20}}, stop = {{0, 0}, {0, 0}};
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || pipe2(self_pipe, O_NONBLOCK) < 0 || sigaction(SIGALRM, &sa, NULL) < 0 ||
	    setitimer(ITIMER_REAL, &every, NULL) < 0) {
		perror("set-up");
		return 1;
	}
	for (long i = 0; i < ROUNDS; i++) {
		char *p = malloc(32 + (size_t)(i % 200)), drain[64];
		if (p == NULL) {
			perror("malloc");
			return 1;
		}
		memset(p, record_byte(i), 32);
		if (pwrite(fd, p, 8, i * 8 % SPAN) != 8) {
			perror("pwrite");
			return 1;
		}
		free(p);
		if (i % 1024 == 0)
			while (read(self_pipe[0], drain, sizeof drain) > 0)
				;
	}
	if (setitimer(ITIMER_REAL, &stop, NULL) < 0 || close(fd) < 0) {
		perror("close");
		return 1;
	}
	static char back[SPAN];
	fd = open(argv[1], O_RDONLY);
	ssize_t got = fd < 0 ? -1 : read(fd, back, sizeof back);
	if (got != SPAN) {
		printf("read %zd bytes, not %d\n", got, SPAN);
		return 1;
	}
	for (long at = 0; at < SPAN; at++) {
		long last = ROUNDS - 1 - ((ROUNDS - 1) - at / 8) % (SPAN / 8); /* the last round at this record */
		if (back[at] != record_byte(last)) {
			printf("byte %ld is '%c', not '%c'\n", at, back[at], record_byte(last));
			return 1;
		}
	}
	printf("ok\n");
	return 0;
}
