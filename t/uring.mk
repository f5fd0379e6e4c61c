# t/uring.mk -- tests of this area (TAP).
