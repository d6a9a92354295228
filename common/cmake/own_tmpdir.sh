#!/bin/sh
# own_tmpdir.sh COMMAND [ARGS...]: runs COMMAND with a fresh folder of its own
# as TMPDIR, removes the folder afterwards and exits with COMMAND's status.
#
# Every MPI test starts through it. Open MPI makes its session folder at
# $TMPDIR/ompi.<host>.<uid>, the same path for every job of one user; two
# mpiexec that ctest starts at the same moment race to make it, and the loser
# ends before MPI_Init with "A call to mkdir was unable to create the desired
# directory ... File exists" (open-mpi/ompi#8510). With a folder per run
# there is nothing to race for.
base="${TMPDIR:-/tmp}"
dir="$(mktemp -d "$base/lab-mpi.XXXXXX")" || {
  echo "own_tmpdir.sh: cannot make a temporary folder in $base (set TMPDIR to a writable folder)" >&2
  exit 1
}
trap 'rm -rf "$dir"; exit 143' TERM
trap 'rm -rf "$dir"; exit 130' INT
TMPDIR="$dir" "$@"
rc=$?
rm -rf "$dir"
exit $rc
