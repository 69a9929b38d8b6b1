/*
 * stage-out - copy each node's local results back to shared storage:
 *   mpiexec -n N stage-out [OPTIONS] SRC DEST
 *
 * The options and the report are in cmd/stage-common/stagecmd.c, shared with
 * stage-in.
 */
#include "stagecmd.h"

int
main(int argc, char **argv)
{
	return stagecmd_main(GFSP_STAGE_OUT, argc, argv);
}
