# t/pnetcdf.mk -- PnetCDF over ffio: t/pnetcdf_files (built with
# $(MPICC_OPENMPI) against Debian's PnetCDF, which is built on Open MPI)
# run by t/pnetcdf_files.sh, which skips without it.
if HAVE_PNETCDF
check_PROGRAMS += t/pnetcdf_files_openmpi
t_pnetcdf_files_openmpi_SOURCES = t/pnetcdf_files.c
t_pnetcdf_files_openmpi_CFLAGS = $(AM_CFLAGS)
t_pnetcdf_files_openmpi_LDADD = -lpnetcdf
$(t_pnetcdf_files_openmpi_OBJECTS) t/pnetcdf_files_openmpi$(EXEEXT): private CC = $(MPICC_OPENMPI)
endif
TESTS += t/pnetcdf_files.sh
EXTRA_DIST += t/pnetcdf_files.sh
