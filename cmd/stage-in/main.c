/*
 * stage-in - copy inputs from shared storage to every node's local
 * storage before a job:
 *   mpiexec -n N stage-in [OPTIONS] SRC... DEST
 *
 * The options and the work are in libcore/driver/stagecmd.c, shared with
 * stage-out.
 */
#include "driver.h"

int
main(int argc, char **argv)
{
	return gfsp_stage_main(GFSP_STAGE_IN, argc, argv);
}
