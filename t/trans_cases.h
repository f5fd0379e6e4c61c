/* t/trans_cases.h -- what the cases of t/trans_cases share: the file each
 * works on (DIR/x.dat), a write that prints its count, and the cases of
 * t/trans_cases_peers.c (another process reads or writes the file). */
#ifndef TRANS_CASES_H
#define TRANS_CASES_H

extern char path[4096];
void put(int fd, const char *s);

void case_messages(void);
void case_shared_index(void);
void case_handlers(void);
void case_crash_report(void);
void case_timer_log(void);
void case_lock_timeout(void);
void case_grown_behind(void);
void case_heard(void);
void case_heard_past_end(void);
/* Byte at of file becomes 'A' + at (case heard's writer): 0 or -1. */
int poke(const char *file, int at);

#endif
