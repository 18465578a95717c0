/* tidemark-exec: the first process of every Tidemark container (PID 1).
 *
 * Usage: tidemark-exec REPORT STDOUT STDERR TIMEOUT_S -- PROGRAM [ARG...]
 *
 * A container's cgroup is gone once it exits, and `docker inspect` has no resource usage, so
 * the facts the host runner gets from wait4(2) and /proc/<pid> are taken here, inside the
 * container, and written as one JSON object to REPORT (a file in the bind-mounted log folder):
 * the conditions achieved (Cpus_allowed_list, the memory cgroup's limit, /proc/self/cgroup) read
 * before the engine starts, and the engine's wall time, rusage and wait status after it ends.
 * The per-CPU lines of /proc/stat (the host's: it is not namespaced) and the load average are
 * sampled right around the engine too, so the interference measured is the engine's, not the
 * daemon's work starting and removing the container.
 * The engine's stdout and stderr go straight to files, as on the host, so a crash loses nothing.
 * PID 1 of a PID namespace gets no default signal actions: SIGTERM/SIGINT are forwarded to the
 * engine as SIGKILL, and TIMEOUT_S (0: none) bounds the engine even if Tidemark itself was
 * killed and can no longer stop the container.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile pid_t child = 0;
static volatile sig_atomic_t timed_out = 0;

static void on_alarm(int sig) { (void)sig; timed_out = 1; if (child > 0) kill(child, SIGKILL); }
static void on_stop(int sig) { (void)sig; if (child > 0) kill(child, SIGKILL); }

/* The first line of `path` that starts with `prefix`, after the prefix and blanks; "" if none. */
static void read_line(const char *path, const char *prefix, char *out, size_t size) {
    char line[4096];
    FILE *f = fopen(path, "r");
    out[0] = '\0';
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, prefix, strlen(prefix)) == 0) {
            char *value = line + strlen(prefix);
            value += strspn(value, " \t");
            value[strcspn(value, "\n")] = '\0';
            snprintf(out, size, "%s", value);
            break;
        }
    }
    fclose(f);
}

/* JSON string body: only what /proc and the cgroup files can hold needs escaping. */
static void json_text(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s); else fputc(*s, f);
    }
}

/* The "cpuN ..." lines of /proc/stat into out (newline-separated). */
static void cpu_lines(char *out, size_t size) {
    char line[1024];
    size_t used = 0;
    FILE *f = fopen("/proc/stat", "r");
    out[0] = '\0';
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "cpu", 3) == 0 && line[3] >= '0' && line[3] <= '9' &&
            used + strlen(line) < size) {
            memcpy(out + used, line, strlen(line) + 1);
            used += strlen(line);
        }
    }
    if (f) fclose(f);
}

static void cgroup_lines(FILE *f) {
    char line[4096];
    int first = 1;
    FILE *in = fopen("/proc/self/cgroup", "r");
    fputc('[', f);
    while (in && fgets(line, sizeof line, in)) {
        line[strcspn(line, "\n")] = '\0';
        fputs(first ? "\"" : ", \"", f);
        json_text(f, line);
        fputc('"', f);
        first = 0;
    }
    if (in) fclose(in);
    fputc(']', f);
}

static int redirect(const char *path, int fd) {
    int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || dup2(out, fd) < 0) return -1;
    close(out);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 7 || strcmp(argv[5], "--") != 0) {
        fprintf(stderr, "usage: tidemark-exec REPORT STDOUT STDERR TIMEOUT_S -- PROGRAM [ARG...]\n");
        return 125;
    }
    const char *report = argv[1];
    double timeout_s = atof(argv[4]);
    char cpus[1024], memory[64];
    read_line("/proc/self/status", "Cpus_allowed_list:", cpus, sizeof cpus);
    read_line("/sys/fs/cgroup/memory/memory.limit_in_bytes", "", memory, sizeof memory);
    if (!memory[0]) read_line("/sys/fs/cgroup/memory.max", "", memory, sizeof memory); /* v2 */

    struct sigaction act = {0};
    act.sa_handler = on_stop;
    sigaction(SIGTERM, &act, NULL);
    sigaction(SIGINT, &act, NULL);
    act.sa_handler = on_alarm;
    sigaction(SIGALRM, &act, NULL);

    static char stat_before[65536], stat_after[65536];
    char load_before[64], load_after[64];
    struct timespec start, end;
    read_line("/proc/loadavg", "", load_before, sizeof load_before);
    cpu_lines(stat_before, sizeof stat_before);
    clock_gettime(CLOCK_MONOTONIC, &start);
    pid_t pid = fork();
    if (pid == 0) {
        if (redirect(argv[2], 1) < 0 || redirect(argv[3], 2) < 0) _exit(126);
        execvp(argv[6], argv + 6);
        fprintf(stderr, "tidemark-exec: cannot run %s: %s\n", argv[6], strerror(errno));
        _exit(127);
    }
    if (pid < 0) { perror("tidemark-exec: fork"); return 125; }
    child = pid;
    if (timeout_s > 0) {  /* to the microsecond, as the host runner's timeout: not alarm(2)'s whole seconds */
        struct itimerval limit = {{0, 0}, {(time_t)timeout_s,
                                           (suseconds_t)((timeout_s - (time_t)timeout_s) * 1e6)}};
        if (limit.it_value.tv_sec == 0 && limit.it_value.tv_usec == 0) limit.it_value.tv_usec = 1;
        setitimer(ITIMER_REAL, &limit, NULL);
    }
    int status = 0;
    struct rusage usage;
    while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {}
    clock_gettime(CLOCK_MONOTONIC, &end);
    cpu_lines(stat_after, sizeof stat_after);
    read_line("/proc/loadavg", "", load_after, sizeof load_after);

    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    FILE *f = fopen(report, "w");
    if (f) {
        fprintf(f, "{\"exit_code\": %d, \"timed_out\": %s, \"wall_s\": %.6f, ", code,
                timed_out ? "true" : "false",
                (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9);
        fprintf(f, "\"user_s\": %.6f, \"sys_s\": %.6f, \"max_rss_kb\": %ld, \"nivcsw\": %ld, ",
                usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6,
                usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6, usage.ru_maxrss,
                usage.ru_nivcsw);
        fputs("\"cpus_allowed_list\": \"", f);
        json_text(f, cpus);
        fputs("\", \"memory_limit\": \"", f);
        json_text(f, memory);
        fprintf(f, "\", \"load1_before\": %.2f, \"load1_after\": %.2f, \"stat_before\": \"",
                atof(load_before), atof(load_after));
        json_text(f, stat_before);
        fputs("\", \"stat_after\": \"", f);
        json_text(f, stat_after);
        fputs("\", \"cgroup\": ", f);
        cgroup_lines(f);
        fputs("}\n", f);
        fclose(f);
    }
    return code >= 0 ? code : 128 - code;
}
