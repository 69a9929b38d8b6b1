#!/bin/bash
# ompi_cluster.sh - the Open MPI build on the emulated cluster under Open
# MPI's mpirun (tests/ompi/cluster.sh, through tests/ompi.sh)
exec "$(dirname "$0")/../ompi.sh" cluster
