# netcdf_glue/local.mk -- libffio_netcdf.so, the serial netCDF glue (see
# netcdf_glue/ffio_netcdf.c); built only when configure found netCDF.
if HAVE_NETCDF
lib_LTLIBRARIES += libffio_netcdf.la
libffio_netcdf_la_SOURCES = netcdf_glue/ffio_netcdf.c
libffio_netcdf_la_CFLAGS = $(AM_CFLAGS) $(NETCDF_CFLAGS)
libffio_netcdf_la_LIBADD = libffio.la -ldl
libffio_netcdf_la_LDFLAGS = $(AM_LDFLAGS) -version-info 0:0:0
endif
