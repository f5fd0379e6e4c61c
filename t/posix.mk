# t/posix.mk -- tests of this area (TAP).
