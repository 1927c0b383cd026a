/* File path helpers; see include/perch/path.h. */
#include <string.h>

#include "perch/path.h"

const char *path_base(const char *path)
{
	const char *slash;

	if (!path)
		return "";
	slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}
