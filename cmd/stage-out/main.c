/*
 * stage-out - copy each node's local results back to shared storage:
 *   mpiexec -n N stage-out [OPTIONS] SRC DEST
 *
 * The options and the work are in libcore/driver/stagecmd.c, shared with
 * stage-in.
 */
#include "driver.h"

int
main(int argc, char **argv)
{
	return gfsp_stage_main(GFSP_STAGE_OUT, argc, argv);
}
