# t/spec.mk -- tests of this area (TAP).
