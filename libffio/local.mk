# libffio/local.mk -- the core library: spec parser, layer stack, file table,
# interposition, direct API.  Layer sources are added by layers/local.mk.
# The code is built once, as a convenience library: libffio.so is made of
# it and exports only the API of ffio.h and ffio_ext.h and the C-library
# names it interposes (-fvisibility=hidden; FFIO_API, FFIO_EXPORT).  Tests
# of internals link the convenience library itself.
lib_LTLIBRARIES += libffio.la
noinst_LTLIBRARIES += libffio_core.la
include_HEADERS += include/ffio.h include/ffio_ext.h
noinst_HEADERS += libffio/ffio-internal.h libffio/interpose.h libffio/real.h
libffio_core_la_SOURCES = \
	libffio/log.c \
	libffio/real.c \
	libffio/kernel_io.c \
	libffio/init.c \
	libffio/spec.c \
	libffio/registry.c \
	libffio/fdtable.c \
	libffio/stack.c \
	libffio/file.c \
	libffio/fork.c \
	libffio/ofd.c \
	libffio/api.c \
	libffio/bufpool.c \
	libffio/posix.c \
	libffio/coherence.c \
	libffio/handlers.c \
	libffio/fddir.c \
	libffio/times.c \
	libffio/rlimit.c \
	libffio/ioctl.c \
	libffio/process.c \
	libffio/aio.c \
	libffio/govern.c \
	libffio/env.c \
	libffio/ext.c \
	libffio/syscall.c
libffio_core_la_SOURCES += libffio/signal.c
libffio_core_la_SOURCES += libffio/guard/arena.c libffio/guard/client.c libffio/guard/shmfile.c
noinst_HEADERS += libffio/guard/guard.h libffio/guard/proto.h
# Where the guardian is installed (guard/client.c looks in the build tree first).
libffio_core_la_CPPFLAGS = $(AM_CPPFLAGS) -DFFIO_GUARDIAN_PATH='"$(pkglibexecdir)/ffio-guardian"'
libffio_core_la_CFLAGS = $(AM_CFLAGS) $(LIBURING_CFLAGS) $(JEMALLOC_CFLAGS) -fvisibility=hidden
libffio_core_la_LIBADD = $(LIBURING_LIBS) $(JEMALLOC_LIBS) -ldl
libffio_la_SOURCES =
libffio_la_LIBADD = libffio_core.la
libffio_la_LDFLAGS = $(AM_LDFLAGS) -version-info 0:0:0
EXTRA_DIST += libffio/ffio.pc.in bin/ffio-run.in
bin_SCRIPTS += bin/ffio-run
