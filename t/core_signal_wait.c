/* t/core_signal_wait.c -- a signal that comes while the thread is inside
 * ffio: its handler waits until the thread leaves (handlers.c), then runs
 * as the kernel would have run it (its siginfo, the mask the kernel gave
 * it, errno kept), while the program's other signals wait behind it; a
 * fault's signal runs at once; a forked child does not run the parent's;
 * a handler that leaves by siglongjmp leaves ffio's marks as they were.
 * "Inside ffio" is made here as ffio's calls make it (ffio_in_lib), and
 * each signal is sent to the thread itself, so that it comes at once. */
#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ffio-internal.h"
#include "tap.h"

static volatile sig_atomic_t order[8], norder, usr1_value, usr1_code, usr1_mask_usr1, usr1_mask_hup;
static volatile sig_atomic_t segv_inside, usr1_context;
static sigjmp_buf back;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	sigset_t now;
	const ucontext_t *ctx = uc;
	(void)sig;
	order[norder++] = SIGUSR1;
	/* The interrupted place: an instruction, and the mask before the signal. */
	usr1_context = ctx && ctx->uc_mcontext.gregs[REG_RIP] != 0 && !sigismember(&ctx->uc_sigmask, SIGUSR1);
	usr1_value = si->si_value.sival_int;
	usr1_code = si->si_code;
	pthread_sigmask(SIG_BLOCK, NULL, &now);
	usr1_mask_usr1 = sigismember(&now, SIGUSR1);
	usr1_mask_hup = sigismember(&now, SIGHUP);
	errno = EPIPE; /* a careless handler: the program's errno must not change */
}

static void on_usr2(int sig)
{
	(void)sig;
	order[norder++] = SIGUSR2;
}

static void on_segv(int sig)
{
	(void)sig;
	segv_inside = ffio_in_lib;
}

static void on_jump(int sig)
{
	siglongjmp(back, sig);
}

static int under_valgrind(void)
{
	const char *pre = getenv("LD_PRELOAD");
	return pre && strstr(pre, "vgpreload_");
}

static int blocked(int sig)
{
	sigset_t now;
	pthread_sigmask(SIG_BLOCK, NULL, &now);
	return sigismember(&now, sig);
}

int main(void)
{
	struct sigaction info = {.sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO};
	struct sigaction plain = {.sa_handler = on_usr2};
	struct sigaction segv = {.sa_handler = on_segv, .sa_flags = SA_NODEFER};
	sigemptyset(&info.sa_mask);
	sigaddset(&info.sa_mask, SIGHUP);
	ffio_init();
	tap_plan(17);
	if (sigaction(SIGUSR1, &info, NULL) < 0 || sigaction(SIGUSR2, &plain, NULL) < 0 ||
	    sigaction(SIGSEGV, &segv, NULL) < 0) {
		tap_ok(0, "sigaction: %s", strerror(errno));
		return tap_done();
	}

	/* Inside ffio: the handler waits, and so does a second signal. */
	ffio_in_lib++;
	pthread_sigqueue(pthread_self(), SIGUSR1, (union sigval){.sival_int = 42});
	sched_yield(); /* a system call's return: where valgrind, too, delivers it */
	tap_ok(norder == 0 && ffio_signal_waiting, "inside ffio, SIGUSR1's handler waits (ran %d, waiting %d)",
	       (int)norder, ffio_signal_waiting);
	if (under_valgrind()) { /* its sigreturn keeps its own copy of the mask */
		tap_skip("valgrind restores the mask a handler leaves in its context");
		tap_skip("valgrind restores the mask a handler leaves in its context");
		raise(SIGUSR2);
	} else {
		tap_ok(blocked(SIGUSR2) && blocked(SIGTERM) && !blocked(SIGSEGV),
		       "the program's other signals are held meanwhile, not a fault's");
		raise(SIGUSR2);
		tap_ok(norder == 0, "SIGUSR2, sent then, waits too");
	}
	raise(SIGSEGV);
	tap_ok(segv_inside == 1, "a fault's signal runs its handler at once, inside ffio");
	errno = EAGAIN;
	ffio_leave();
	int e = errno;
	/* Both come as SIGUSR1's handler starts (SIGUSR2 is not in its mask):
	 * SIGUSR2's runs first, nested, as the kernel runs two at once. */
	tap_ok(norder == 2 && order[0] != order[1],
	       "leaving ffio runs SIGUSR1's handler and SIGUSR2's, once each (ran %d)", (int)norder);
	tap_ok(usr1_value == 42 && usr1_code == SI_QUEUE, "with the signal's siginfo (value %d, code %d)",
	       (int)usr1_value, (int)usr1_code);
	tap_ok(usr1_mask_usr1 && usr1_mask_hup, "with the mask the kernel gives it (the signal, sa_mask)");
	tap_ok(usr1_context, "its context: the interrupted instruction and the mask before the signal");
	tap_ok(e == EAGAIN, "the program's errno is kept (%s)", strerrorname_np(e));
	tap_ok(!blocked(SIGUSR1) && !blocked(SIGUSR2) && !blocked(SIGHUP) && !ffio_signal_waiting,
	       "then the thread's mask is as before");

	/* Outside ffio, a handler runs at once. */
	norder = 0;
	raise(SIGUSR2);
	tap_ok(norder == 1, "outside ffio, a handler runs at once");

	/* Forked while a handler waits: the child never got the signal. */
	norder = 0;
	ffio_in_lib++;
	raise(SIGUSR1);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int bad = ffio_signal_waiting || blocked(SIGUSR2) || norder != 0;
		ffio_leave();
		_exit(bad || norder != 0 ? 1 : 0);
	}
	int st = -1;
	waitpid(pid, &st, 0);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "a child forked meanwhile does not run the parent's handler; its mask is as before");
	ffio_leave();
	tap_ok(norder == 1 && order[0] == SIGUSR1, "the parent runs it when it leaves ffio");

	/* A handler that leaves by siglongjmp. */
	struct sigaction jump = {.sa_handler = on_jump};
	sigaction(SIGUSR2, &jump, NULL);
	volatile int jumped = 0;
	if (sigsetjmp(back, 1) == 0) {
		ffio_in_lib++;
		raise(SIGUSR2);
		tap_ok(!jumped && ffio_signal_waiting, "a jumping handler waits too");
		ffio_leave();
		tap_ok(0, "the handler jumped");
	} else {
		jumped = 1;
		tap_ok(1, "the handler jumped when the thread left ffio");
	}
	tap_ok(ffio_in_lib == 0 && ffio_in_handler == 0 && !ffio_signal_waiting,
	       "after the jump: outside ffio, in no handler, nothing waiting");
	tap_ok(!blocked(SIGUSR2), "and the mask sigsetjmp saved");
	return tap_done();
}
