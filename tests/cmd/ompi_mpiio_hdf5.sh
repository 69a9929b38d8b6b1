#!/bin/bash
# ompi_mpiio_hdf5.sh - mpiio_hdf5.sh on the Open MPI build, under Open MPI's mpirun
# (tests/ompi.sh)
exec "$(dirname "$0")/../ompi.sh" mpiio_hdf5
