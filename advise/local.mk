# advise/local.mk -- ffio-advise, the tool that runs a program once traced
# by the event layer and recommends an FF_IO_OPTS spec (ffio-advise(1)).
# It uses no MPI library and no internal header of ffio.
bin_PROGRAMS += ffio-advise
ffio_advise_SOURCES = advise/main.c advise/run.c advise/log.c advise/json.c advise/rules.c
noinst_HEADERS += advise/advise.h
ffio_advise_CPPFLAGS = $(AM_CPPFLAGS) -DFFIO_LIBDIR='"$(libdir)"'
ffio_advise_LDADD = -lm
