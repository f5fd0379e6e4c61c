# libffio/local.mk -- the core library: spec parser, layer stack, file table,
# interposition, direct API.  Layer sources are added by layers/local.mk.
lib_LTLIBRARIES += libffio.la
include_HEADERS += include/ffio.h
noinst_HEADERS += libffio/ffio-internal.h libffio/interpose.h
libffio_la_SOURCES = \
	libffio/log.c \
	libffio/real.c \
	libffio/init.c \
	libffio/spec.c \
	libffio/registry.c \
	libffio/fdtable.c \
	libffio/stack.c \
	libffio/file.c \
	libffio/ofd.c \
	libffio/api.c \
	libffio/bufpool.c \
	libffio/posix.c \
	libffio/process.c \
	libffio/aio.c \
	libffio/hint.c
libffio_la_SOURCES += libffio/signal.c
libffio_la_CFLAGS = $(AM_CFLAGS) $(LIBURING_CFLAGS) $(JEMALLOC_CFLAGS) -fvisibility=default
libffio_la_LIBADD = $(LIBURING_LIBS) $(JEMALLOC_LIBS) -ldl
libffio_la_LDFLAGS = $(AM_LDFLAGS) -version-info 0:0:0
EXTRA_DIST += libffio/ffio.pc.in bin/ffio-run.in
bin_SCRIPTS += bin/ffio-run
