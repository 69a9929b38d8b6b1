#!/bin/bash
# ompi_unit.sh - the unit tests (tests/unit/test_*) of the Open MPI build
# (tests/ompi.sh)
exec "$(dirname "$0")/../ompi.sh" unit
