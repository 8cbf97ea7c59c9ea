// SPDX-License-Identifier: GPL-2.0
/*
 * usage: open_dirs N
 *
 * Open the root directory N times as opendir() does (O_RDONLY |
 * O_NONBLOCK | O_CLOEXEC | O_DIRECTORY; the kernel adds O_LARGEFILE), and
 * N times a file with plain O_RDONLY, in turns: a workload for a filter
 * on do_sys_openat2()'s flags that must let exactly N opens through.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n;

	if (argc != 2 || (n = strtol(argv[1], NULL, 10)) < 0) {
		fprintf(stderr, "usage: open_dirs N\n");
		return 2;
	}
	for (long i = 0; i < n; i++) {
		int d = open("/", O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_DIRECTORY);
		int f = open("/proc/self/stat", O_RDONLY);

		if (d < 0 || f < 0) {
			perror("open_dirs: open");
			return 1;
		}
		close(d);
		close(f);
	}
	return 0;
}
