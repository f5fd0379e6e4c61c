# layers/local.mk -- one source file per layer (the cache: a folder of
# them, with a private header), all linked into libffio.
noinst_HEADERS += layers/cache/cache.h
libffio_core_la_SOURCES += \
	layers/sys.c \
	layers/event.c \
	layers/fault.c \
	layers/delay.c \
	layers/cache/cache.c \
	layers/cache/page.c \
	layers/cache/buffer.c \
	layers/cache/async.c \
	layers/cache/evict.c \
	layers/cache/below.c \
	layers/cache/flush.c \
	layers/cache/sieve.c \
	layers/cache/write.c \
	layers/cache/aside.c \
	layers/cache/readahead.c \
	layers/cache/read.c \
	layers/compat.c \
	layers/uring.c
