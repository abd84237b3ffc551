#ifdef __linux__
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CFolioShims.h"

int cfolio_openat2(int dirfd, const char *path, unsigned long long flags, unsigned long long resolve) {
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = flags | O_CLOEXEC;
    how.resolve = resolve;
    long fd;
    do { fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how); } while (fd < 0 && errno == EINTR);
    return (int)fd;
}

int cfolio_reopen(int fd, int flags) {
    char path[32];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int opened;
    do { opened = open(path, flags | O_CLOEXEC | O_NOCTTY); } while (opened < 0 && errno == EINTR);
    return opened;
}

int cfolio_send_fds(int socket, const int *fds, int count) {
    if (count < 0 || count > CFOLIO_MAX_PASSED_FDS) { errno = EINVAL; return -1; }
    char byte = 0;
    struct iovec part = { .iov_base = &byte, .iov_len = 1 };
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(int) * CFOLIO_MAX_PASSED_FDS)];
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = { .msg_iov = &part, .msg_iovlen = 1 };
    if (count > 0) {
        message.msg_control = control.space;
        message.msg_controllen = CMSG_SPACE(sizeof(int) * count);
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int) * count);
        memcpy(CMSG_DATA(header), fds, sizeof(int) * count);
    }
    ssize_t sent;
    do { sent = sendmsg(socket, &message, MSG_NOSIGNAL); } while (sent < 0 && errno == EINTR);
    return sent == 1 ? 0 : -1;
}

int cfolio_receive_fds(int socket, int *fds, int capacity) {
    char byte;
    struct iovec part = { .iov_base = &byte, .iov_len = 1 };
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(int) * CFOLIO_MAX_PASSED_FDS)];
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = { .msg_iov = &part, .msg_iovlen = 1, .msg_control = control.space, .msg_controllen = sizeof control.space };
    ssize_t received;
    do { received = recvmsg(socket, &message, MSG_CMSG_CLOEXEC); } while (received < 0 && errno == EINTR);
    if (received < 0) return -1;
    if (received == 0) { errno = ECONNRESET; return -1; }
    int count = 0;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        int carried = (int)((header->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int i = 0; i < carried; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(header) + i * sizeof(int), sizeof fd);
            if (count < capacity) fds[count++] = fd; else close(fd);
        }
    }
    if (message.msg_flags & MSG_CTRUNC) {
        for (int i = 0; i < count; i++) close(fds[i]);
        errno = EMSGSIZE;
        return -1;
    }
    return count;
}
#endif
