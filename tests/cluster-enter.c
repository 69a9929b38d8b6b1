/*
 * cluster-enter - how tests/cluster.sh runs a command on a node of the
 * emulated cluster; built by cluster.sh itself (into its state dir).
 *
 *   cluster-enter init
 *       The node's first process (PID 1 of the node's PID namespace):
 *       reaps every process that ends up its child (daemons, orphans)
 *       and ends, taking the whole node with it, on SIGTERM.
 *
 *   cluster-enter PID DIR CMD [ARG..]
 *       CMD in the namespaces of node init PID (network, IPC, UTS, PID
 *       and mount), in DIR if the node has it (else /).  CMD is a child
 *       of this process, which waits for it and ends as it ended; the
 *       signals a caller uses to stop a command (TERM, INT, HUP, QUIT,
 *       USR1, USR2, ALRM) are passed on to CMD, and CMD is killed if this
 *       process is (SIGKILL cannot be passed on).
 *
 * A node so has one set of processes, which see each other and no other
 * node's: ranks of one node share /dev/shm, SysV IPC and /proc/PID (what
 * MPI's shared-memory and cross-memory transports need), and a rank on
 * another node is not even a process they can name.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t child_pid;

static void pass_on(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

static void end_init(int sig)
{
	(void)sig;
	_exit(0);
}

static void child_ended(int sig)
{
	(void)sig;
}

/* reap whatever ends; SIGCHLD is blocked but while waiting for it, so
 * that none is lost between a reap and the wait */
static int run_init(void)
{
	struct sigaction end = { .sa_handler = end_init }, chld = { .sa_handler = child_ended };
	sigset_t block, wait_mask;

	sigaction(SIGTERM, &end, NULL);
	sigaction(SIGINT, &end, NULL);
	sigaction(SIGCHLD, &chld, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &wait_mask);
	sigdelset(&wait_mask, SIGCHLD);
	for (;;) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		sigsuspend(&wait_mask);
	}
	return 0;
}

static const char *const kinds[] = { "net", "ipc", "uts", "pid", "mnt" };
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

int main(int argc, char **argv)
{
	static const int passed[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM };
	int fd[NKINDS], status;
	char path[64], *end;
	long pid;
	pid_t c;

	if (argc == 2 && strcmp(argv[1], "init") == 0)
		return run_init();
	if (argc < 4) {
		fprintf(stderr, "usage: cluster-enter init | cluster-enter PID DIR CMD [ARG..]\n");
		return 2;
	}
	pid = strtol(argv[1], &end, 10);
	if (*end || pid <= 1) {
		fprintf(stderr, "cluster-enter: '%s' is not a node's init pid\n", argv[1]);
		return 2;
	}
	/* every namespace is opened before any is entered: /proc/PID is
	 * the host's until the mount namespace changes */
	for (size_t i = 0; i < NKINDS; i++) {
		snprintf(path, sizeof(path), "/proc/%ld/ns/%s", pid, kinds[i]);
		fd[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (fd[i] < 0) {
			fprintf(stderr, "cluster-enter: cannot open %s: %s (is the node up?)\n",
				path, strerror(errno));
			return 125;
		}
	}
	for (size_t i = 0; i < NKINDS; i++)
		if (setns(fd[i], 0) != 0) {
			fprintf(stderr, "cluster-enter: cannot enter node %ld's %s namespace: %s\n",
				pid, kinds[i], strerror(errno));
			return 125;
		}
	c = fork();
	if (c < 0) {
		perror("cluster-enter: fork");
		return 125;
	}
	if (c == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* this process, in the host's PID namespace, is no process of
		 * the node's: the child sees its parent as 0 until it is gone
		 * (and it is the node init's) */
		if (getppid() != 0)
			_exit(125);
		if (chdir(argv[2]) != 0 && chdir("/") != 0)
			_exit(125);
		execvp(argv[3], argv + 3);
		fprintf(stderr, "cluster-enter: cannot run '%s': %s\n", argv[3], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	child_pid = c;
	for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++) {
		struct sigaction sa = { .sa_handler = pass_on, .sa_flags = SA_RESTART };
		sigaction(passed[i], &sa, NULL);
	}
	while (waitpid(c, &status, 0) < 0)
		if (errno != EINTR) {
			perror("cluster-enter: waitpid");
			return 125;
		}
	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		raise(WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}
