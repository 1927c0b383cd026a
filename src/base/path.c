/* File path helpers; see include/perch/base/path.h. */
#include <string.h>

#include "perch/base/path.h"
#include "perch/base/xalloc.h"

const char *path_base(const char *path)
{
	const char *slash;

	if (!path)
		return "";
	slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

char *path_dir(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	return xstrndup(path, slash == path ? 1 : (size_t)(slash - path));
}
