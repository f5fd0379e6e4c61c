# t/core.mk -- tests of this area (TAP).
