#ifndef CFOLIO_SHIMS_H
#define CFOLIO_SHIMS_H

#ifdef __linux__
#include <sys/types.h>
#include <sys/xattr.h>
#include <sys/inotify.h>
#include <spawn.h>

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

/// listxattrat(2) (Linux 6.13) without following a final symbolic link: the names of the extended
/// attributes of `name` in the folder open as `dirfd`, one path component looked up rather than a
/// whole path. Returns the bytes written to `list` (or needed, with `size` 0), or -1 with errno set
/// (ENOSYS on older kernels).
long cfolio_listxattrat(int dirfd, const char *name, char *list, unsigned long size);

/// sync_file_range(2) with SYNC_FILE_RANGE_WRITE: starts writing a range back to disk without
/// waiting, so that a later fsync has less to do. Returns 0 or -1 with errno set.
int cfolio_start_writeback(int fd, long long offset, long long length);

/// Whether the file open at `fd` lives on tmpfs (fstatfs(2)): 1, 0, or -1 with errno set.
int cfolio_in_memory(int fd);

/// posix_spawn_file_actions_addclosefrom_np(3) (glibc 2.34): the spawned child closes every
/// descriptor from `lowest` up, whatever its close-on-exec flag. Returns 0 or an error number.
int cfolio_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);

/// pidfd_open(2): a descriptor for process `pid` that polls readable once the process has ended
/// (a zombie counts as ended), and that names that process even after its id is used again.
/// Returns the descriptor (close-on-exec) or -1 with errno set.
int cfolio_pidfd_open(pid_t pid);

/// sched_setaffinity(2) for thread `tid` with the cores whose bits are set in `cores` (core 0 is
/// bit 0; the first 64 cores). Returns 0 or -1 with errno set. For the benchmarks' placements.
int cfolio_set_affinity(pid_t tid, unsigned long long cores);

/// Starts `path` with `argv` and `envp` (both NULL-terminated) under a supervisor process, in a
/// process group of its own, so that the command never outlives the calling process:
/// - the supervisor has PR_SET_PDEATHSIG: if the calling *thread* ends (the process killed, even by
///   SIGKILL), the whole group is killed at once;
/// - a signal the caller sends the supervisor goes to the whole group, which then has
///   `grace_seconds` to end before it is killed;
/// - when the command ends, anything it left running in its group is killed.
/// Run from a terminal, the group gets the terminal for its run. The supervisor exits with the
/// command's status (128 + the signal's number for a signal; 127 when it could not run).
/// Returns the supervisor's pid, or -1 with errno set. The calling thread must live until the
/// supervisor has been waited for.
pid_t cfolio_spawn_supervised(const char *path, char *const argv[], char *const envp[], int grace_seconds);

/// The birth time of the item at `path` (statx(2) with STATX_BTIME; a symbolic link itself unless
/// `follow`), in nanoseconds since 1970. Returns 0, 1 when the file system records none, or -1
/// with errno set.
int cfolio_birth_time(const char *path, int follow, long long *nanoseconds);

/// The inode generation of the item at `path` (ioctl FS_IOC_GETVERSION), which the file system
/// changes when it reuses an inode number. The item is opened without following a final link,
/// without blocking and read-only. Returns 0, 1 when the file system keeps none, or -1 with errno set.
int cfolio_inode_generation(const char *path, unsigned long long *generation);

/// The inode generation of the item open as `fd` (which may be an O_PATH descriptor: it is then
/// opened anew, read-only and without blocking, through `/proc/self/fd`). Returns as
/// cfolio_inode_generation does.
int cfolio_inode_generation_of(int fd, unsigned long long *generation);

/// Forwards SIGTERM, SIGINT, SIGHUP and SIGQUIT that this process receives to `target` (from a
/// signal handler); 0 restores their default actions.
void cfolio_forward_signals(pid_t target);

/// The FUSE kernel protocol's structures and constants (`struct fuse_in_header`, `FUSE_LOOKUP`, …),
/// for the drive's mount, which speaks the protocol on `/dev/fuse` itself (docs/architecture.md).
#include <linux/fuse.h>

/// Receives one file descriptor sent with SCM_RIGHTS on the Unix socket `socket` (as `fusermount3`
/// sends the mounted `/dev/fuse`). Returns the descriptor (close-on-exec), or -1 with errno set
/// (ECONNRESET when the peer closed the socket without sending one).
int cfolio_receive_fd(int socket);

/// FUSE passthrough (kernel 6.9, protocol 7.40; needs CAP_SYS_ADMIN): registers `fd` as a backing
/// file on the FUSE device `device`. Returns its backing id (> 0), or -1 with errno set.
int cfolio_fuse_backing_open(int device, int fd);

/// Drops backing id `id` on `device` (files opened with it keep their backing file). Returns 0 or -1.
int cfolio_fuse_backing_close(int device, int id);

/// The protocol's flags for passthrough, which this system's <linux/fuse.h> may predate.
#define CFOLIO_FUSE_PASSTHROUGH_FLAGS2 (1u << 5) /* FUSE_PASSTHROUGH (1ULL << 37), in init's flags2 */
#define CFOLIO_FUSE_DIRECT_IO_ALLOW_MMAP_FLAGS2 (1u << 4) /* FUSE_DIRECT_IO_ALLOW_MMAP (1ULL << 36), 7.39 */
#define CFOLIO_FOPEN_PASSTHROUGH (1u << 7)

/// fallocate(2). Returns 0 or -1 with errno set.
int cfolio_fallocate(int fd, int mode, long long offset, long long length);

/// open(2)'s O_PATH, and openat2(2)'s RESOLVE_* flags (Swift's Glibc module has none of them).
#define CFOLIO_O_PATH 010000000
#define CFOLIO_RESOLVE_NO_XDEV 0x01
#define CFOLIO_RESOLVE_NO_MAGICLINKS 0x02
#define CFOLIO_RESOLVE_NO_SYMLINKS 0x04
#define CFOLIO_RESOLVE_BENEATH 0x08
#define CFOLIO_RESOLVE_IN_ROOT 0x10

/// openat2(2) (Linux 5.6) with `flags` (O_CLOEXEC added) and `resolve` (CFOLIO_RESOLVE_*): `path`
/// looked up from the folder open as `dirfd` under the kernel's resolution rules. Returns the
/// descriptor or -1 with errno set (EXDEV when the path would leave the folder under
/// RESOLVE_BENEATH, ELOOP for a forbidden link).
int cfolio_openat2(int dirfd, const char *path, unsigned long long flags, unsigned long long resolve);

/// Opens the item open as `fd` (an O_PATH descriptor among others) anew with `flags` (O_CLOEXEC
/// and O_NOCTTY added), through `/proc/self/fd`: the same inode, whatever its path names now.
/// Returns the descriptor or -1 with errno set.
int cfolio_reopen(int fd, int flags);

/// The most descriptors one message of cfolio_send_fds carries (the kernel's SCM_MAX_FD is 253).
#define CFOLIO_MAX_PASSED_FDS 250

/// Sends `count` descriptors (at most CFOLIO_MAX_PASSED_FDS) and one byte with SCM_RIGHTS on the
/// Unix socket `socket`. Returns 0 or -1 with errno set.
int cfolio_send_fds(int socket, const int *fds, int count);

/// Receives one message of cfolio_send_fds: up to `capacity` descriptors (close-on-exec) into
/// `fds`. Returns how many, or -1 with errno set (ECONNRESET when the peer closed the socket
/// first, EMSGSIZE when the message carried more than fit, all then closed).
int cfolio_receive_fds(int socket, int *fds, int capacity);

/// renameat2(2): `flags` 0, RENAME_NOREPLACE (1) or RENAME_EXCHANGE (2). Returns 0 or -1 with errno set.
int cfolio_renameat2(int olddir, const char *oldpath, int newdir, const char *newpath, unsigned int flags);
#endif

/// Compares two UTF-8 strings byte by byte, except that runs of ASCII digits compare by their
/// numeric value (“2” before “10”; leading zeros ignored), as Finder and file managers order names.
/// The signature of an SQLite collation (`context` unused). Returns <0, 0 or >0.
int cfolio_natural_compare(void *context, int length_a, const void *a, int length_b, const void *b);

#endif
