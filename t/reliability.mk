# t/reliability.mk -- tests of this area (TAP).
