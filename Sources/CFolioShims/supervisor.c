#ifdef __linux__
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "CFolioShims.h"

/// Every signal back to its default action (handlers and ignores of the parent are not the command's).
static void cfolio_default_signals(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &action, NULL);
    }
}

static long cfolio_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)now.tv_sec;
}

/// The supervisor, after fork: only async-signal-safe calls from here on (the parent has threads).
static void cfolio_supervise(pid_t parent, pid_t parent_group, const char *path, char *const argv[], char *const envp[], int grace) {
    cfolio_default_signals();
    setpgid(0, 0);
    // The parent's death (even by SIGKILL) comes as SIGTERM; if it died already, stop here.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(125);
    pid_t group = getpid();
    // A command run from a terminal gets the terminal (as a shell's foreground job would).
    int terminal = isatty(0) && tcgetpgrp(0) == parent_group;
    if (terminal) tcsetpgrp(0, group);

    pid_t command = fork();
    if (command == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execve(path, argv, envp);
        _exit(127);
    }
    int code = 127;
    if (command > 0) {
        sigset_t wanted;
        sigemptyset(&wanted);
        sigaddset(&wanted, SIGCHLD);
        sigaddset(&wanted, SIGTERM);
        sigaddset(&wanted, SIGINT);
        sigaddset(&wanted, SIGHUP);
        sigaddset(&wanted, SIGQUIT);
        struct timespec tick = {0, 200 * 1000 * 1000};
        long kill_at = 0;
        int status = 0;
        for (;;) {
            if (waitpid(command, &status, WNOHANG) == command) break;
            if (getppid() != parent) {
                // The parent is gone, and with it the claim: nothing of the command may go on.
                kill(-group, SIGKILL);
                _exit(137);
            }
            if (kill_at != 0 && cfolio_now() >= kill_at) {
                kill(-group, SIGKILL);
                _exit(137);
            }
            siginfo_t info;
            int sig = sigtimedwait(&wanted, &info, &tick);
            if (sig > 0 && sig != SIGCHLD && info.si_code == SI_USER && info.si_pid == parent) {
                // Forwarded by the parent: to the whole group, with a grace period to end.
                kill(-group, sig);
                if (kill_at == 0) kill_at = cfolio_now() + grace;
            }
        }
        code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    // The command ended: whatever it started in its group goes too, so nothing outlives the claim.
    if (terminal) tcsetpgrp(0, parent_group);
    if (setpgid(0, parent_group) == 0) kill(-group, SIGKILL);
    _exit(code);
}

pid_t cfolio_spawn_supervised(const char *path, char *const argv[], char *const envp[], int grace_seconds) {
    pid_t parent = getpid();
    pid_t parent_group = getpgrp();
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t supervisor = fork();
    if (supervisor == 0) cfolio_supervise(parent, parent_group, path, argv, envp, grace_seconds);
    int saved = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = saved;
    return supervisor;
}

static volatile pid_t cfolio_forward_target = 0;

static void cfolio_forward(int sig) {
    pid_t target = cfolio_forward_target;
    if (target > 0) kill(target, sig);
}

void cfolio_forward_signals(pid_t target) {
    cfolio_forward_target = target;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = target > 0 ? cfolio_forward : SIG_DFL;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    int signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};
    for (unsigned i = 0; i < sizeof signals / sizeof signals[0]; i++) sigaction(signals[i], &action, NULL);
}
#endif
