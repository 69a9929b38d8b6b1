#!/bin/bash
# ompi_split_merge.sh - split_merge.sh on the Open MPI build, under Open MPI's mpirun
# (tests/ompi.sh)
exec "$(dirname "$0")/../ompi.sh" split_merge
