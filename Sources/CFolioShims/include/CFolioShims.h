#ifndef CFOLIO_SHIMS_H
#define CFOLIO_SHIMS_H

#ifdef __linux__
#include <sys/types.h>
#include <sys/xattr.h>
#include <sys/inotify.h>

/// Takes (type F_RDLCK/F_WRLCK) or releases (F_UNLCK) an open-file-description lock on the whole file.
/// `wait` != 0 uses F_OFD_SETLKW. Returns 0 or -1 with errno set.
int cfolio_ofd_setlk(int fd, short type, int wait);

/// Asks whether an OFD lock of `type` could be taken. Returns 0 if free, 1 if held by another, -1 on error.
int cfolio_ofd_getlk(int fd, short type);

/// The values of F_RDLCK, F_WRLCK, F_UNLCK (Swift imports them, but keep one source of truth).
short cfolio_lock_read(void);
short cfolio_lock_write(void);
short cfolio_lock_unlock(void);

/// The layout of Linux's `struct ucred` (SO_PEERCRED), which glibc exposes only with _GNU_SOURCE.
struct cfolio_ucred {
    pid_t pid;
    uid_t uid;
    gid_t gid;
};

/// fnmatch(3) with GNU's FNM_CASEFOLD when `casefold` != 0. Returns 0 on a match.
int cfolio_fnmatch(const char *pattern, const char *name, int casefold);

/// renameat2(2) with RENAME_NOREPLACE: fails with EEXIST instead of replacing `newpath`.
/// Returns 0 or -1 with errno set (EINVAL where the file system cannot do it).
int cfolio_rename_noreplace(const char *oldpath, const char *newpath);

/// sync_file_range(2) with SYNC_FILE_RANGE_WRITE: starts writing a range back to disk without
/// waiting, so that a later fsync has less to do. Returns 0 or -1 with errno set.
int cfolio_start_writeback(int fd, long long offset, long long length);
#endif

#endif
