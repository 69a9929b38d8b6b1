/*
 * stage-in - copy inputs from shared storage to every node's local
 * storage before a job:
 *   mpiexec -n N stage-in [OPTIONS] SRC... DEST
 *
 * The options and the report are in cmd/stage-common/stagecmd.c, shared with
 * stage-out.
 */
#include "stagecmd.h"

int
main(int argc, char **argv)
{
	return stagecmd_main(GFSP_STAGE_IN, argc, argv);
}
