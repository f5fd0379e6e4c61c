# man/local.mk -- manual pages; each page adds itself here with one line.
dist_man_MANS += man/ffopen.3 man/ffread.3 man/ffwrite.3 man/ffpread.3 man/ffpwrite.3 man/ffseek.3 man/ffflush.3 man/fffsync.3 man/ffclose.3 man/ffgetstats.3
dist_man_MANS += man/ffio-event.7 man/ffio-fault.7 man/ffio-delay.7
dist_man_MANS += man/ffio.7
dist_man_MANS += man/ffio-mpi.7
dist_man_MANS += man/ffio-uring.7
dist_man_MANS += man/ffio-run.1
dist_man_MANS += man/ffio-netcdf.7
dist_man_MANS += man/ffio-cache.7
dist_man_MANS += man/ffio-reliability.7
dist_man_MANS += man/ffio_ext.3
dist_man_MANS += man/ffio-advise.1
