# man/local.mk -- manual pages; each page adds itself here with one line.
