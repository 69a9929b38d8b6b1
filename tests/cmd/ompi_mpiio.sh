#!/bin/bash
# ompi_mpiio.sh - mpiio.sh on the Open MPI build, under Open MPI's mpirun
# (tests/ompi.sh)
exec "$(dirname "$0")/../ompi.sh" mpiio
