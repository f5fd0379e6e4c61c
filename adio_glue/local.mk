# adio_glue/local.mk -- see the comment in the files of adio_glue/.
