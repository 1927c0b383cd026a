/* Messages to stderr with a fixed "perch: <level>: " prefix. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/log.h"

int log_level = LOG_LEVEL_NORMAL;

static void vreport(const char *prefix, const char *fmt, va_list ap, int err)
{
	char msg[4096];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (err)
		fprintf(stderr, "perch: %s%s: %s\n", prefix, msg, strerror(err));
	else
		fprintf(stderr, "perch: %s%s\n", prefix, msg);
}

int log_err(int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("error: ", fmt, ap, 0);
	va_end(ap);
	return ret;
}

int log_errno(int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("error: ", fmt, ap, ret < 0 ? -ret : ret);
	va_end(ap);
	return ret;
}

int log_warn(int ret, const char *fmt, ...)
{
	va_list ap;

	if (log_level < LOG_LEVEL_NORMAL)
		return ret;
	va_start(ap, fmt);
	vreport("warning: ", fmt, ap, 0);
	va_end(ap);
	return ret;
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	if (log_level < LOG_LEVEL_INFO)
		return;
	va_start(ap, fmt);
	vreport("", fmt, ap, 0);
	va_end(ap);
}

void log_debug(const char *fmt, ...)
{
	va_list ap;

	if (log_level < LOG_LEVEL_DEBUG)
		return;
	va_start(ap, fmt);
	vreport("debug: ", fmt, ap, 0);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("fatal: ", fmt, ap, 0);
	va_end(ap);
	exit(2);
}
