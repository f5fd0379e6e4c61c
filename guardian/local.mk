# guardian/local.mk -- ffio-guardian, the process that writes a process's
# cached data back when it dies (libffio/guard/client.c starts it).  It
# shares only libffio/guard/proto.h with the library and links nothing of it.
pkglibexec_PROGRAMS = guardian/ffio-guardian
guardian_ffio_guardian_SOURCES = guardian/ffio-guardian.c
guardian_ffio_guardian_LDFLAGS = $(AM_LDFLAGS) $(GUARDIAN_LDFLAGS)
