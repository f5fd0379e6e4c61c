# t/layers.mk -- tests of this area (TAP).
