# t/netcdf.mk -- tests of this area (TAP).
