/* measure: run a command and print its CPU seconds (user + system), peak RSS (KiB) and exit status.
 *
 * The scaling tests cannot take these from Python's own wait4: Python starts a child by vfork, and
 * Linux carries the parent's peak RSS into the child's at exec, so every measurement would be at
 * least the size of the test driver. Forked from this small process, the command's peak is its own.
 * The command's standard output is discarded, its standard error passes through.
 *
 * Usage: measure COMMAND [ARG...]    prints "SECONDS KIB STATUS" on standard output
 */
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: measure COMMAND [ARG...]\n");
        return 2;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("measure: fork");
        return 2;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, 1);
        execvp(argv[1], argv + 1);
        perror("measure: exec");
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) < 0) {
        perror("measure: wait4");
        return 2;
    }
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? -WTERMSIG(st) : -1;
    double t = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    printf("%.6f %ld %d\n", t, ru.ru_maxrss, code);
    return 0;
}
