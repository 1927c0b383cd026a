/* Small helpers for file paths. */
#ifndef PERCH_PATH_H
#define PERCH_PATH_H

/* The last component of @path ("/usr/lib/libc.so.6" -> "libc.so.6"); @path itself when it
 * has no '/' or ends in one, "" for NULL. Points into @path. */
const char *path_base(const char *path);
/* The directory that holds @path, allocated ("a/b" -> "a", "/x" -> "/", "b" -> "."), as
 * the directory a file created at @path would go to. */
char *path_dir(const char *path);

#endif
