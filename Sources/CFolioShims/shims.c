#ifdef __linux__
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <string.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "CFolioShims.h"

int cfolio_ofd_setlk(int fd, short type, int wait) {
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    return fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl);
}

int cfolio_ofd_getlk(int fd, short type) {
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    if (fcntl(fd, F_OFD_GETLK, &fl) != 0) return -1;
    return fl.l_type == F_UNLCK ? 0 : 1;
}

short cfolio_lock_read(void) { return F_RDLCK; }
short cfolio_lock_write(void) { return F_WRLCK; }
short cfolio_lock_unlock(void) { return F_UNLCK; }

#include <sched.h>
int cfolio_set_affinity(pid_t tid, unsigned long long cores) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int core = 0; core < 64; core++) {
        if (cores & (1ULL << core)) CPU_SET(core, &set);
    }
    return sched_setaffinity(tid, sizeof set, &set);
}

#include <fnmatch.h>
int cfolio_fnmatch(const char *pattern, const char *name, int casefold) {
    return fnmatch(pattern, name, casefold ? FNM_CASEFOLD : 0);
}

#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/fs.h>
int cfolio_rename_noreplace(const char *oldpath, const char *newpath) {
    return (int)syscall(SYS_renameat2, AT_FDCWD, oldpath, AT_FDCWD, newpath, RENAME_NOREPLACE);
}

#ifndef SYS_listxattrat
#define SYS_listxattrat 465
#endif
long cfolio_listxattrat(int dirfd, const char *name, char *list, unsigned long size) {
    return syscall(SYS_listxattrat, dirfd, name, AT_SYMLINK_NOFOLLOW, list, size);
}

int cfolio_start_writeback(int fd, long long offset, long long length) {
    return sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE);
}
int cfolio_in_memory(int fd) {
    struct statfs status;
    if (fstatfs(fd, &status) != 0) return -1;
    return status.f_type == 0x01021994; /* TMPFS_MAGIC */
}
int cfolio_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}
int cfolio_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}
int cfolio_birth_time(const char *path, int follow, long long *nanoseconds) {
    struct statx status;
    memset(&status, 0, sizeof status);
    if (statx(AT_FDCWD, path, (follow ? 0 : AT_SYMLINK_NOFOLLOW) | AT_STATX_SYNC_AS_STAT, STATX_BTIME, &status) != 0) return -1;
    if (!(status.stx_mask & STATX_BTIME)) return 1;
    *nanoseconds = (long long)status.stx_btime.tv_sec * 1000000000LL + status.stx_btime.tv_nsec;
    return 0;
}

static int cfolio_generation_ioctl(int fd, unsigned long long *generation) {
    int value = 0;
    int result = ioctl(fd, FS_IOC_GETVERSION, &value);
    int saved = errno;
    close(fd);
    if (result != 0) {
        if (saved == ENOTTY || saved == EOPNOTSUPP || saved == EINVAL) return 1;
        errno = saved;
        return -1;
    }
    *generation = (unsigned int)value;
    return 0;
}

int cfolio_inode_generation(const char *path, unsigned long long *generation) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return -1;
    return cfolio_generation_ioctl(fd, generation);
}

int cfolio_inode_generation_of(int fd, unsigned long long *generation) {
    int opened = cfolio_reopen(fd, O_RDONLY | O_NONBLOCK);
    if (opened < 0) return -1;
    return cfolio_generation_ioctl(opened, generation);
}
#endif

#include <string.h>

static int cfolio_is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

int cfolio_natural_compare(void *context, int length_a, const void *a, int length_b, const void *b) {
    (void)context;
    const unsigned char *x = a, *y = b;
    int i = 0, j = 0;
    while (i < length_a && j < length_b) {
        if (cfolio_is_digit(x[i]) && cfolio_is_digit(y[j])) {
            while (i < length_a && x[i] == '0') i++;
            while (j < length_b && y[j] == '0') j++;
            int end_i = i, end_j = j;
            while (end_i < length_a && cfolio_is_digit(x[end_i])) end_i++;
            while (end_j < length_b && cfolio_is_digit(y[end_j])) end_j++;
            // The longer run (without leading zeros) is the larger number; equal lengths compare digit by digit.
            if (end_i - i != end_j - j) return end_i - i < end_j - j ? -1 : 1;
            int order = memcmp(x + i, y + j, (size_t)(end_i - i));
            if (order != 0) return order < 0 ? -1 : 1;
            i = end_i;
            j = end_j;
            continue;
        }
        if (x[i] != y[j]) return x[i] < y[j] ? -1 : 1;
        i++;
        j++;
    }
    if (i < length_a) return 1;
    if (j < length_b) return -1;
    return 0;
}
