# layers/local.mk -- one source file per layer, all linked into libffio.
libffio_core_la_SOURCES += \
	layers/sys.c \
	layers/event.c \
	layers/fault.c \
	layers/delay.c \
	layers/cache.c \
	layers/compat.c \
	layers/uring.c
