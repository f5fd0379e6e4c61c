/* t/mpi_child.c -- an MPI program that starts programs without MPI, as
 * job scripts' programs do: system(3) of a shell command and popen(3) of
 * one whose output it reads, after MPI_Init and before MPI_Finalize.
 * Run through ffio-run, the children inherit LD_PRELOAD with the MPI
 * glue in it (t/mpi_child.sh).  Prints, on each rank, "rank R: system
 * STATUS" and "rank R: popen 'TEXT' STATUS"; exits 1 if either failed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank = -1, bad = 0;
	char line[64] = "";

	if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
		return 2;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int rc = system("exit 7");
	printf("rank %d: system %d\n", rank, rc);
	bad |= rc != 7 << 8;
	FILE *p = popen("echo child", "r");
	if (!p || !fgets(line, sizeof line, p))
		bad = 1;
	line[strcspn(line, "\n")] = 0;
	rc = p ? pclose(p) : -1;
	printf("rank %d: popen '%s' %d\n", rank, line, rc);
	bad |= rc != 0 || strcmp(line, "child") != 0;
	fflush(stdout);
	MPI_Finalize();
	return bad;
}
