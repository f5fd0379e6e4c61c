# t/posix.mk -- tests of the POSIX interposition (TAP).  One program,
# t/posix_calls.c, built plain, with 64-bit offsets and fortified; linked
# with libffio (run directly) and unlinked (run preloaded by
# t/posix_preload.sh, which also checks exact event counts, symbol
# versions and a malformed spec).
POSIX_CALLS_LARGE = -D_FILE_OFFSET_BITS=64
POSIX_CALLS_FORTIFY = -D_FILE_OFFSET_BITS=64 -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2

check_PROGRAMS += t/posix_calls t/posix_calls64 t/posix_calls_fortify \
	t/posix_calls_plain t/posix_calls_plain64 t/posix_calls_plainfort \
	t/posix_mmap_hook
TESTS += t/posix_calls t/posix_calls64 t/posix_calls_fortify t/posix_preload.sh \
	t/posix_ffio_run.sh t/posix_mmap_hook
EXTRA_DIST += t/posix_preload.sh t/posix_ffio_run.sh

t_posix_calls_SOURCES = t/posix_calls.c
t_posix_calls_LDADD = libffio.la
t_posix_calls64_SOURCES = t/posix_calls.c
t_posix_calls64_CPPFLAGS = $(AM_CPPFLAGS) $(POSIX_CALLS_LARGE)
t_posix_calls64_LDADD = libffio.la
t_posix_calls_fortify_SOURCES = t/posix_calls.c
t_posix_calls_fortify_CPPFLAGS = $(AM_CPPFLAGS) $(POSIX_CALLS_FORTIFY)
t_posix_calls_fortify_CFLAGS = $(AM_CFLAGS) -O2
t_posix_calls_fortify_LDADD = libffio.la

# a library's mmap hook that maps with syscall(SYS_mmap) (UCX's, under MPICH)
t_posix_mmap_hook_SOURCES = t/posix_mmap_hook.c
t_posix_mmap_hook_LDADD = libffio.la

t_posix_calls_plain_SOURCES = t/posix_calls.c
t_posix_calls_plain64_SOURCES = t/posix_calls.c
t_posix_calls_plain64_CPPFLAGS = $(AM_CPPFLAGS) $(POSIX_CALLS_LARGE)
t_posix_calls_plainfort_SOURCES = t/posix_calls.c
t_posix_calls_plainfort_CPPFLAGS = $(AM_CPPFLAGS) $(POSIX_CALLS_FORTIFY)
t_posix_calls_plainfort_CFLAGS = $(AM_CFLAGS) -O2
