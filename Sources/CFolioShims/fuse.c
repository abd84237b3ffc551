#ifdef __linux__
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CFolioShims.h"

int cfolio_receive_fd(int socket) {
    int fd;
    int count = cfolio_receive_fds(socket, &fd, 1);
    if (count < 0) return -1;
    if (count != 1) { errno = EPROTO; return -1; }
    return fd;
}

struct cfolio_fuse_backing_map {
    int32_t fd;
    uint32_t flags;
    uint64_t padding;
};

/* _IOW(229, 1, struct fuse_backing_map) and _IOW(229, 2, uint32_t), as <linux/fuse.h> 7.40 defines them. */
#define CFOLIO_FUSE_DEV_IOC_BACKING_OPEN _IOW(229, 1, struct cfolio_fuse_backing_map)
#define CFOLIO_FUSE_DEV_IOC_BACKING_CLOSE _IOW(229, 2, uint32_t)

int cfolio_fuse_backing_open(int device, int fd) {
    struct cfolio_fuse_backing_map map = { .fd = fd, .flags = 0, .padding = 0 };
    return ioctl(device, CFOLIO_FUSE_DEV_IOC_BACKING_OPEN, &map);
}

int cfolio_fuse_backing_close(int device, int id) {
    uint32_t backing = (uint32_t)id;
    return ioctl(device, CFOLIO_FUSE_DEV_IOC_BACKING_CLOSE, &backing);
}

int cfolio_fallocate(int fd, int mode, long long offset, long long length) {
    return fallocate(fd, mode, (off_t)offset, (off_t)length);
}

int cfolio_renameat2(int olddir, const char *oldpath, int newdir, const char *newpath, unsigned int flags) {
    return (int)syscall(SYS_renameat2, olddir, oldpath, newdir, newpath, flags);
}
#endif
