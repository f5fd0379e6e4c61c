# t/diff.mk -- the differential test of the transparency promise (TAP):
# t/diff_kernel.c, not linked with libffio, applies random operations to a
# managed file and an unmanaged twin and compares every result with the
# kernel's; t/diff_kernel.sh runs it without preload and preloaded over
# several stacks.
check_PROGRAMS += t/diff_kernel
t_diff_kernel_SOURCES = t/diff_kernel.c t/diff_kernel_ops.c t/diff_kernel.h
t_diff_kernel_LDADD = -lpthread
check_SCRIPTS += t/diff_kernel.sh
TESTS += t/diff_kernel.sh
EXTRA_DIST += t/diff_kernel.sh
