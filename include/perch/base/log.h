/* Messages: one place that prints errors, warnings and debug output.
 * Modules return errors; only main/cli calls die(). */
#ifndef PERCH_LOG_H
#define PERCH_LOG_H

#include <stdnoreturn.h>

enum log_level {
	LOG_LEVEL_QUIET = 0, /* errors only */
	LOG_LEVEL_NORMAL,    /* errors and warnings (the default) */
	LOG_LEVEL_INFO,	     /* -v */
	LOG_LEVEL_DEBUG,     /* -vv */
};

extern int log_level;

/* Print "perch: error: ..." and return @ret, so callers can write
 * `return log_err(-ESRCH, "no process %d", pid);`. */
int log_err(int ret, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Like log_err() with ": strerror(-ret)" appended (@ret is a negative errno). */
int log_errno(int ret, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int log_warn(int ret, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "perch: fatal: ..." and exit(2). For main/cli and out-of-memory only. */
noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
