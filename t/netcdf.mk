# t/netcdf.mk -- tests of the serial netCDF glue (TAP); built only when
# configure found netCDF.
if HAVE_NETCDF
EXTRA_DIST += t/netcdf_lib.sh t/netcdf_formats.sh t/netcdf_ffio_run.sh t/netcdf_python.sh
# The same writer twice: relinked (libffio_netcdf, libffio ahead of
# -lnetcdf) and plain (run raw and preloaded).
check_PROGRAMS += t/netcdf_write t/netcdf_write_plain
t_netcdf_write_SOURCES = t/netcdf_write.c
t_netcdf_write_CFLAGS = $(AM_CFLAGS) $(NETCDF_CFLAGS)
t_netcdf_write_LDADD = libffio.la libffio_netcdf.la $(NETCDF_LIBS)
# Relinked programs need libffio in their own NEEDED list, ahead of libc
# and libnetcdf: a toolchain that links --as-needed would drop it.
t_netcdf_write_LDFLAGS = $(AM_LDFLAGS) -Wl,--no-as-needed
t_netcdf_write_plain_SOURCES = t/netcdf_write.c
t_netcdf_write_plain_CFLAGS = $(AM_CFLAGS) $(NETCDF_CFLAGS)
t_netcdf_write_plain_LDADD = $(NETCDF_LIBS)
TESTS += t/netcdf_formats.sh t/netcdf_ffio_run.sh
# netCDF4-python and xarray (skipped when not installed).
TESTS += t/netcdf_python.sh
# Linked tests (relinked: libffio_netcdf, libffio ahead of -lnetcdf).
check_PROGRAMS += t/netcdf_sync t/netcdf_abort
t_netcdf_sync_CFLAGS = $(AM_CFLAGS) $(NETCDF_CFLAGS)
t_netcdf_sync_LDADD = libffio.la libffio_netcdf.la $(NETCDF_LIBS)
t_netcdf_sync_LDFLAGS = $(AM_LDFLAGS) -Wl,--no-as-needed
t_netcdf_abort_CFLAGS = $(AM_CFLAGS) $(NETCDF_CFLAGS)
t_netcdf_abort_LDADD = libffio.la libffio_netcdf.la $(NETCDF_LIBS)
t_netcdf_abort_LDFLAGS = $(AM_LDFLAGS) -Wl,--no-as-needed
TESTS += t/netcdf_sync t/netcdf_abort
endif
