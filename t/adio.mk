# t/adio.mk -- tests of this area (TAP).
