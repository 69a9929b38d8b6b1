#!/bin/bash
# ompi_mpiio_pnetcdf.sh - mpiio_pnetcdf.sh on the Open MPI build, under Open MPI's mpirun
# (tests/ompi.sh)
exec "$(dirname "$0")/../ompi.sh" mpiio_pnetcdf
