# t/layers.mk -- tests of the sys, event, fault and delay layers (TAP).
noinst_HEADERS += t/layer_common.h
check_PROGRAMS += t/layer_sys t/layer_event t/layer_fault t/layer_delay
TESTS += t/layer_sys t/layer_event t/layer_fault t/layer_delay
t_layer_sys_LDADD = libffio.la
t_layer_event_LDADD = libffio_core.la
t_layer_fault_LDADD = libffio_core.la
t_layer_delay_LDADD = libffio_core.la
check_PROGRAMS += t/blocks
check_SCRIPTS += t/layer_preload.sh
TESTS += t/layer_preload.sh
EXTRA_DIST += t/layer_preload.sh
