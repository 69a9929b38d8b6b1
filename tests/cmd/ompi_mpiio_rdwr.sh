#!/bin/bash
# ompi_mpiio_rdwr.sh - mpiio_rdwr.sh on the Open MPI build, under Open MPI's mpirun
# (tests/ompi.sh)
exec "$(dirname "$0")/../ompi.sh" mpiio_rdwr
