# netcdf_glue/local.mk -- see the comment in the files of netcdf_glue/.
