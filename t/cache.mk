# t/cache.mk -- tests of this area (TAP).
