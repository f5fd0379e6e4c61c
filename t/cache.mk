# t/cache.mk -- tests of the cache layer (TAP).
check_PROGRAMS += t/cache_model
TESTS += t/cache_model
t_cache_model_LDADD = libffio.la
check_PROGRAMS += t/cache_focus
TESTS += t/cache_focus
t_cache_focus_LDADD = libffio.la
check_PROGRAMS += t/cache_async
TESTS += t/cache_async
t_cache_async_LDADD = libffio.la
check_PROGRAMS += t/cache_huge
TESTS += t/cache_huge
t_cache_huge_LDADD = libffio.la
check_PROGRAMS += t/cache_split
TESTS += t/cache_split
t_cache_split_LDADD = libffio.la
