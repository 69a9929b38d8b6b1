#!/bin/bash
# ompi_mpiio_rewrite.sh - mpiio_rewrite.sh on the Open MPI build, under Open MPI's mpirun
# (tests/ompi.sh)
exec "$(dirname "$0")/../ompi.sh" mpiio_rewrite
