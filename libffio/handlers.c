/* libffio/handlers.c -- which thread runs a signal handler of the program.
 *
 * A handler may interrupt the program anywhere, in malloc or holding its
 * own locks, so ffio must do nothing in one that is not async-signal-safe:
 * no flush of the files for a message a handler sends (a byte to a
 * self-pipe, a kill; coherence.c).  The handlers the program installs with
 * sigaction or signal run inside a trampoline that counts, per thread, the
 * handlers running (ffio_in_handler).  The program sees its own handlers
 * and flags: sigaction's old action and signal's result name them, not
 * the trampoline.  A handler left by siglongjmp or longjmp is counted out
 * there.  Handlers set by a raw system call are not seen; nor are sigset
 * and sysv_signal (handlers installed that way run as before).
 *
 * A signal that comes while the thread is inside ffio (ffio_in_lib: a
 * cache half-updated, a lock held) does not run its handler there: the
 * handler's own calls on a managed file would find the file mid-change.
 * The trampoline keeps the signal, blocks the program's other signals
 * when it returns, and the handler runs when the thread leaves ffio
 * (ffio_leave), with the mask the kernel gave it, before the call
 * returns: as if the signal had come as the call ended.  Not the signals
 * of a fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS), whose
 * handler must run where the fault is.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>

#include "ffio-internal.h"
#include "interpose.h"

_Thread_local int ffio_in_handler __attribute__((tls_model("initial-exec")));

/* The program's handler of each signal that ffio's trampoline stands for:
 * one of the two, as SA_SIGINFO said; and what the kernel blocks while it
 * runs (sa_mask, and the signal itself without SA_NODEFER). */
static struct {
	void (*plain)(int);
	void (*info)(int, siginfo_t *, void *);
	int added_siginfo; /* the kernel's action has SA_SIGINFO the program did not give */
	sigset_t blocks;
} program[NSIG];

/* A signal whose handler waits until the thread leaves ffio (while
 * ffio_signal_waiting): its number and information, the handler, the
 * registers it interrupted (as a profiler's handler reads them from its
 * context), the thread's mask before it came and the mask the kernel sets
 * for the handler.  No system call is made to keep it: a timer that
 * fires every few microseconds keeps this path busy. */
static _Thread_local struct {
	int sig;
	siginfo_t info;
	void (*plain)(int);
	void (*with_info)(int, siginfo_t *, void *);
	gregset_t registers;
	sigset_t before, during;
} waiting __attribute__((tls_model("initial-exec")));

static int of_a_fault(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGTRAP ||
	       sig == SIGSYS;
}

/* Every signal a handler of the program may catch, but those of a fault
 * and the C library's own (below SIGRTMIN), blocked in set. */
static void block_program_signals(sigset_t *set)
{
	for (int s = 1; s < NSIG; s++)
		if (!of_a_fault(s) && (s < 32 || s >= SIGRTMIN))
			sigaddset(set, s);
}

static void run(int sig, siginfo_t *si, void *uc, void (*plain)(int), void (*info)(int, siginfo_t *, void *))
{
	ffio_in_handler++;
	if (info)
		info(sig, si, uc);
	else if (plain)
		plain(sig);
	ffio_in_handler--;
}

static void trampoline(int sig, siginfo_t *si, void *uc)
{
	void (*info)(int, siginfo_t *, void *) = __atomic_load_n(&program[sig].info, __ATOMIC_ACQUIRE);
	void (*plain)(int) = __atomic_load_n(&program[sig].plain, __ATOMIC_ACQUIRE);
	/* Claimed first: a signal that interrupts this (one not in the
	 * handler's mask) runs its handler at once, as before ffio waited. */
	if (ffio_in_lib > 0 && !of_a_fault(sig) && uc != NULL && !ffio_signal_waiting++) {
		ucontext_t *ctx = uc;
		waiting.sig = sig;
		waiting.info = *si;
		waiting.plain = plain;
		waiting.with_info = info;
		memcpy(waiting.registers, ctx->uc_mcontext.gregs, sizeof waiting.registers);
		waiting.before = ctx->uc_sigmask;
		sigorset(&waiting.during, &ctx->uc_sigmask, &program[sig].blocks);
		block_program_signals(&ctx->uc_sigmask);
		return;
	}
	run(sig, si, uc, plain, info);
}

void ffio_signal_run_waiting(void)
{
	if (!ffio_signal_waiting)
		return;
	int saved = errno;
	ucontext_t uc;
	memset(&uc, 0, sizeof uc); /* no floating-point state: it stayed in the signal's frame */
	memcpy(uc.uc_mcontext.gregs, waiting.registers, sizeof waiting.registers);
	uc.uc_sigmask = waiting.before;
	siginfo_t si = waiting.info;
	ffio_signal_waiting = 0;
	(void)pthread_sigmask(SIG_SETMASK, &waiting.during, NULL);
	run(waiting.sig, &si, &uc, waiting.plain, waiting.with_info);
	(void)pthread_sigmask(SIG_SETMASK, &uc.uc_sigmask, NULL);
	errno = saved;
}

void ffio_signal_forget_waiting(void)
{
	if (!ffio_signal_waiting)
		return;
	ffio_signal_waiting = 0;
	(void)pthread_sigmask(SIG_SETMASK, &waiting.before, NULL);
}

static int is_function(void (*h)(int))
{
	return h != SIG_DFL && h != SIG_IGN && h != SIG_ERR;
}

static void remember(int sig, const struct sigaction *act)
{
	int info = (act->sa_flags & SA_SIGINFO) != 0;
	program[sig].blocks = act->sa_mask;
	if (!(act->sa_flags & SA_NODEFER))
		sigaddset(&program[sig].blocks, sig);
	__atomic_store_n(&program[sig].info, info ? act->sa_sigaction : NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&program[sig].plain, info ? NULL : act->sa_handler, __ATOMIC_RELEASE);
}

/* An action as the kernel holds it, as the program gave it: the handler
 * the trampoline stood for when it was read (before).  SA_RESETHAND has
 * the kernel put back SIG_DFL, but keep the flags, SA_SIGINFO with them. */
static void as_given(struct sigaction *old, void (*plain)(int), void (*info)(int, siginfo_t *, void *),
		     int added_siginfo)
{
	if (old->sa_sigaction == trampoline) {
		if (info) {
			old->sa_sigaction = info;
			return;
		}
		old->sa_handler = plain;
	} else if (!added_siginfo || is_function(old->sa_handler)) {
		return;
	}
	old->sa_flags &= ~SA_SIGINFO;
}

int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

FFIO_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	NEED(sigaction, return __sigaction(sig, act, old));
	if (sig <= 0 || sig >= NSIG)
		return ffio_real.sigaction(sig, act, old);
	void (*plain)(int) = __atomic_load_n(&program[sig].plain, __ATOMIC_ACQUIRE);
	void (*info)(int, siginfo_t *, void *) = __atomic_load_n(&program[sig].info, __ATOMIC_ACQUIRE);
	int added = __atomic_load_n(&program[sig].added_siginfo, __ATOMIC_ACQUIRE);
	struct sigaction wrapped;
	const struct sigaction *give = act;
	int valid = act && !ffio_user_range_odd(act, sizeof *act), adds = 0;
	if (valid && ((act->sa_flags & SA_SIGINFO) ? act->sa_sigaction != NULL : is_function(act->sa_handler))) {
		wrapped = *act;
		wrapped.sa_sigaction = trampoline;
		wrapped.sa_flags |= SA_SIGINFO;
		adds = !(act->sa_flags & SA_SIGINFO);
		remember(sig, act);
		give = &wrapped;
	}
	int rc = ffio_real.sigaction(sig, give, old);
	int err = errno;
	if (rc < 0 && give == &wrapped) { /* SIGKILL, SIGSTOP, a bad old */
		__atomic_store_n(&program[sig].info, info, __ATOMIC_RELEASE);
		__atomic_store_n(&program[sig].plain, plain, __ATOMIC_RELEASE);
	} else if (rc == 0 && valid) {
		__atomic_store_n(&program[sig].added_siginfo, adds, __ATOMIC_RELEASE);
	}
	if (rc == 0 && old)
		as_given(old, plain, info, added);
	errno = err;
	return rc;
}

__sighandler_t bsd_signal(int sig, __sighandler_t handler);

/* The C library's signal, whose flags it chooses (siginterrupt's), then
 * the handler it set wrapped with those flags. */
FFIO_EXPORT __sighandler_t signal(int sig, __sighandler_t handler)
{
	NEED(signal, return bsd_signal(sig, handler));
	NEED(sigaction, return ffio_real.signal(sig, handler));
	if (sig <= 0 || sig >= NSIG)
		return ffio_real.signal(sig, handler);
	void (*plain)(int) = __atomic_load_n(&program[sig].plain, __ATOMIC_ACQUIRE);
	void (*info)(int, siginfo_t *, void *) = __atomic_load_n(&program[sig].info, __ATOMIC_ACQUIRE);
	__sighandler_t was = ffio_real.signal(sig, handler);
	if (was == SIG_ERR)
		return was;
	int err = errno;
	struct sigaction now;
	if (is_function(handler) && ffio_real.sigaction(sig, NULL, &now) == 0 && now.sa_handler == handler)
		(void)sigaction(sig, &now, NULL);
	errno = err;
	if (was == (__sighandler_t)(void (*)(void))trampoline)
		was = info ? (__sighandler_t)(void (*)(void))info : plain;
	return was;
}

/* Leaving a handler by a jump: the thread runs none any more.  (A jump
 * from one handler into another that it interrupted counts both out.) */
#define JUMP(name)                                                    \
	FFIO_EXPORT void name(struct __jmp_buf_tag env[1], int val)   \
	{                                                             \
		ffio_in_handler = 0;                                  \
		ffio_real_init();                                     \
		ffio_real.name(env, val);                             \
		__builtin_unreachable();                              \
	}
void __longjmp_chk(struct __jmp_buf_tag env[1], int val); /* _FORTIFY_SOURCE's, undeclared */
JUMP(siglongjmp)
JUMP(longjmp)
JUMP(_longjmp)
JUMP(__longjmp_chk)
