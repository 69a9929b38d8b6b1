#!/bin/bash
# ompi_cache.sh - cache.sh on the Open MPI build, under Open MPI's mpirun
# (tests/ompi.sh)
exec "$(dirname "$0")/../ompi.sh" cache
