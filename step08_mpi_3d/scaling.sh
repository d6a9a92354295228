#!/usr/bin/env bash
# Strong scaling of step08's distributed DGEMM: one problem size, several rank counts.
#
#   step08_mpi_3d/scaling.sh [options] N P [P ...]
#
#   --build DIR    the build whose bin/step08_mpi_3d runs (default: build/mpi, else
#                  build/solution, build/both, build/student, the first that has it)
#   --out DIR      where the results go (default: results)
#   --local LIST   step04 (default), openblas, cuda; comma-separated: one run each
#   --impl LIST    solution (default where built), student, baseline (ScaLAPACK pdgemm)
#   --threads T    OpenMP threads per rank (default 1)
#   --reps R       timed calls per run (default 3)
#   --warmup W     untimed calls first (default 1)
#   --append       add to OUT/step08_breakdown.csv instead of starting it afresh
#   --dry-run      print the commands, run nothing
#   -- ARGS        passed on to step08_mpi_3d (e.g. -- --impl student --beta 1)
#
# Each run is `mpiexec -n P step08_mpi_3d --n N --threads T --breakdown ...` (the
# matrices born on the ranks) with every rank bound to its own cores while P * T
# fits the cores of this machine (and unbound, oversubscribed, when it does not:
# the plot marks those). Then OUT/step08_breakdown.csv holds every rank of every
# run, OUT/step08_scaling.csv one row per run (wall, each rank's product
# min/median/max, overhead, speed-up and efficiency against P = 1), and
# OUT/step08_breakdown.png the bars. Example (the lab's reference run, 16 cores):
#   step08_mpi_3d/scaling.sh --local step04,openblas --impl solution,baseline 8192 1 2 4 8 16
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
build="" out="$root/results" local=step04 impl="" threads=1 reps=3 warmup=1 append=0 dry=0 extra=()

die() { echo "scaling.sh: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --local) local=${2:?--local needs a list of kernels}; shift 2 ;;
    --impl) impl=${2:?--impl needs a list}; shift 2 ;;
    --warmup) warmup=${2:?--warmup needs a number}; shift 2 ;;
    --threads) threads=${2:?--threads needs a number}; shift 2 ;;
    --reps) reps=${2:?--reps needs a number}; shift 2 ;;
    --append) append=1; shift ;;
    --dry-run) dry=1; shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) break ;;
  esac
done
[[ $# -ge 2 ]] || die "usage: scaling.sh [options] N P [P ...] (see --help)"
n=$1; shift
ranks=()
while [[ $# -gt 0 && "$1" != "--" ]]; do ranks+=("$1"); shift; done
[[ "${1:-}" == "--" ]] && { shift; extra=("$@"); }
for v in "$n" "$threads" "$reps" "${ranks[@]}"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || die "'$v' is not a positive whole number"
done
[[ "$warmup" =~ ^[0-9]+$ ]] || die "--warmup: '$warmup' is not a whole number"
[[ "$local" =~ ^(step04|openblas|cuda|cpu)(,(step04|openblas|cuda|cpu))*$ ]] || die "--local takes step04, openblas, cuda (comma-separated), not '$local'"

if [[ -z "$build" ]]; then
  for b in build/mpi build/solution build/both build/student; do
    [[ -x "$root/$b/bin/step08_mpi_3d" ]] && { build="$root/$b"; break; }
  done
fi
exe="$build/bin/step08_mpi_3d"
[[ -x "$exe" ]] || die "no step08_mpi_3d in ${build:-build/*}; build it (--target step08_mpi_3d)"
command -v mpiexec >/dev/null || die "no mpiexec: apt-get install openmpi-bin libopenmpi-dev"

# Open MPI refuses root and more ranks than cores unless told; MPICH needs neither.
openmpi=0
mpiexec --version 2>&1 | grep -qE "Open MPI|OpenRTE" && openmpi=1
if [[ $openmpi -eq 1 && $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
cores=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
export OMP_NUM_THREADS=$threads NCCL_NVLS_ENABLE=0

mkdir -p "$out"
breakdown="$out/step08_breakdown.csv"
[[ $append -eq 1 || $dry -eq 1 ]] || rm -f "$breakdown"

status=0
for p in "${ranks[@]}"; do
  if (( p * threads <= cores )); then
    # One rank per group of T cores, its threads kept there (pe = processing elements per rank).
    if [[ $openmpi -eq 1 ]]; then
      place=(--map-by "slot:PE=$threads" --bind-to core)
    else
      place=(-bind-to core)
    fi
  else
    echo "scaling.sh: $p ranks x $threads threads > $cores cores: oversubscribed, unbound, will not scale" >&2
    if [[ $openmpi -eq 1 ]]; then place=(--oversubscribe --bind-to none); else place=(); fi
  fi
  # Open MPI passes the environment to other nodes only when told (-x); MPICH always does.
  [[ $openmpi -eq 1 ]] && place+=(-x OMP_NUM_THREADS -x NCCL_NVLS_ENABLE)
  [[ $openmpi -eq 1 && -n "${LD_LIBRARY_PATH:-}" ]] && place+=(-x LD_LIBRARY_PATH)
  cmd=(mpiexec -n "$p" "${place[@]}" "$exe" --n "$n" --threads "$threads" --reps "$reps" --warmup "$warmup"
       --local "$local" --breakdown "$breakdown")
  [[ -n "$impl" ]] && cmd+=(--impl "$impl")
  cmd+=("${extra[@]}")
  echo "+ ${cmd[*]}"
  [[ $dry -eq 1 ]] && continue
  "${cmd[@]}" || { status=$?; echo "scaling.sh: the run with $p ranks failed (exit $status)" >&2; }
done
[[ $dry -eq 1 ]] && exit 0

# The plot needs matplotlib; the system python has it where a venv's may not.
py=python3
python3 -c "import matplotlib" 2>/dev/null || py=/usr/bin/python3
"$py" "$here/plot_breakdown.py" "$breakdown" --png "$out/step08_breakdown.png" \
  --scaling "$out/step08_scaling.csv" || status=$?
exit $status
