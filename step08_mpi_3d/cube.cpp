// step08_mpi_3d — TODO for the student: DGEMM on a px x py x pz cube of ranks.
//
// What to do: fill in the six marked parts below, top to bottom, then choose_grid.cpp.
// Read the handout (step08_mpi_3d/README.md) first: it walks through the cube. In
// one paragraph: the rank at (x, y, z) multiplies A_xz (row block x, k-block z of A)
// by B_zy (k-block z, column block y of B). A starts on the y = 0 face and is
// broadcast along y, B starts on the x = 0 face and is broadcast along x; the pz
// partial products of C_xy are summed along z onto the z = 0 face, and C is
// gathered from it.
//
// Call MPI through the wrappers of comm.hpp (mpi::isend, mpi::bcast, ...): they
// check every call and count the bytes each rank moves, which the tests compare
// with the formulas of grid.hpp. Every phase runs on every rank (ranks that have
// nothing to do in it just return), and a failure on one rank is raised on all.
//
// Test:   ./lab test -L step08   (then, after a rebuild: ctest --test-dir build/student -L step08)
// Time:   mpiexec -n 8 --oversubscribe build/student/bin/step08_mpi_3d --n 1024 --impl student
#include <mpi.h>

#include <utility>

#include "comm.hpp"
#include "grid.hpp"
#include "lab/gemm_args.hpp"
#include "local_kernel.hpp"
#include "mpi3d.hpp"

namespace {

using lab::ConstMatView;
using lab::Matrix;
using lab::MatView;
using lab::step08::Comm;
using lab::step08::Grid;
using lab::step08::Problem;
using lab::step08::Split;
using lab::step08::Traffic;
namespace mpi = lab::step08::mpi;

// The communicators of the cube. Every rank is in exactly one of each kind; the
// faces that hold data are those through rank 0 = (0, 0, 0).
struct Cube {
  Comm cart;     // all ranks, with coordinates (x, y, z)
  Comm face_a;   // same y: an x-z face; the y = 0 one holds A
  Comm face_b;   // same x: a y-z face; the x = 0 one holds B
  Comm face_c;   // same z: an x-y face; the z = 0 one holds C
  Comm fibre_a;  // same x and z: A_xz travels along it (y varies)
  Comm fibre_b;  // same y and z: B_zy travels along it (x varies)
  Comm fibre_c;  // same x and y: the partial C_xy are summed along it (z varies)
  int x = 0, y = 0, z = 0;
};

// How the cube cuts m, n and k.
struct Cuts {
  Split m, n, k;
};

Cube make_cube(MPI_Comm comm, const Grid& g) {
  Cube c;
  // TODO: MPI_Cart_create with dims {px, py, pz}; MPI_Cart_sub for 3 faces and 3 fibres
  LAB_TODO(
      "make_cube: MPI_Cart_create (reorder = 0), MPI_Cart_coords, and MPI_Cart_sub for the faces and fibres");
  return c;
}

// The block of face rank r: face coordinate `row_dim` picks its row block, `col_dim`
// its column block (a face of a Cartesian communicator is Cartesian too).
std::pair<int, int> block_of(const Comm& face, int r, int row_dim, int col_dim) {
  int cc[2];
  LAB_MPI_CHECK(MPI_Cart_coords(face.get(), r, 2, cc));
  return {cc[row_dim], cc[col_dim]};
}

// Face rank 0 holds the full matrix M; every rank of the face gets its block of it,
// stored contiguously (ld = rows).
Matrix scatter_blocks(const Comm& face, ConstMatView M, Split rows, int row_dim, Split cols, int col_dim,
                      Traffic& t) {
  const auto [bi, bj] = block_of(face, face.rank(), row_dim, col_dim);
  Matrix mine(rows.size(bi), cols.size(bj));
  // TODO: face rank 0: mpi::isend the others their blocks, copy its own, wait; others: recv
  LAB_TODO("scatter_blocks: face rank 0 sends every other rank its block of M, the others receive theirs");
  return mine;
}

// The mirror of scatter_blocks: every rank of the face sends its block, face rank 0
// puts each one into its place in M. Nothing outside M's rows x cols region is written.
void gather_blocks(const Comm& face, ConstMatView mine, MatView M, Split rows, int row_dim, Split cols,
                   int col_dim, Traffic& t) {
  // TODO: face rank 0: mpi::irecv the blocks into place in M, copy its own, wait; others: send
  LAB_TODO(
      "gather_blocks: face rank 0 receives every other rank's block into its place in M, the others send");
}

// Phase 1: A onto the y = 0 face, B onto the x = 0 face, and (only when beta != 0,
// since beta == 0 must not read C) C onto the z = 0 face.
void scatter_inputs(const Cube& cube, const Cuts& cut, const Problem& pb, ConstMatView A, ConstMatView B,
                    ConstMatView C, Matrix& a, Matrix& b, Matrix& c, Traffic& t) {
  // The face coordinates are the kept dimensions in order: face_a is (x, z), face_b
  // is (y, z), face_c is (x, y).
  if (cube.y == 0) a = scatter_blocks(cube.face_a, A, cut.m, 0, cut.k, 1, t);
  if (cube.x == 0) b = scatter_blocks(cube.face_b, B, cut.k, 1, cut.n, 0, t);
  if (cube.z == 0 && pb.beta != 0.0) c = scatter_blocks(cube.face_c, C, cut.m, 0, cut.n, 1, t);
}

// Phase 2: every rank ends up with its A_xz and B_zy.
void broadcast_blocks(const Cube& cube, const Cuts& cut, Matrix& a, Matrix& b, Traffic& t) {
  // TODO: ranks off the faces allocate their blocks; mpi::bcast A on fibre_a, B on fibre_b
  LAB_TODO("broadcast_blocks: allocate the blocks off the faces, then mpi::bcast A along y and B along x");
}

// Phase 3: the partial product. On entry c holds C0's block on the z = 0 face when
// beta != 0; elsewhere it is empty.
void multiply_blocks(const Cube& cube, const Cuts& cut, const Problem& pb, const lab::step08::Options& opts,
                     const Matrix& a, const Matrix& b, Matrix& c) {
  // TODO: local_gemm: c <- alpha a b, plus beta c on the z = 0 face only
  LAB_TODO("multiply_blocks: c <- alpha * a * b (+ beta * c on the z = 0 face only), with local_gemm");
}

// Phase 4: C_xy <- the sum of the pz partial products, on the z = 0 face.
void reduce_blocks(const Cube& cube, Matrix& c, Traffic& t) {
  // TODO: mpi::reduce_sum along fibre_c onto its rank 0 (z = 0)
  LAB_TODO("reduce_blocks: sum the partial C blocks along z with mpi::reduce_sum");
}

// Runs one phase on every rank, books its time and traffic, and lets no rank go on
// when another failed (the agreement at the end also makes the time that of the slowest).
template <class F>
void phase(MPI_Comm comm, const Cube& cube, lab::step08::Breakdown& bd, lab::step08::Phase ph, F&& fn) {
  lab::step08::note_progress(lab::step08::phase_name(ph), bd.grid, cube.x, cube.y, cube.z);
  const double t0 = MPI_Wtime();
  lab::step08::all_or_none(comm, [&] { fn(bd.traffic[ph]); });
  bd.seconds[ph] += MPI_Wtime() - t0;
}

}  // namespace

void lab::step08::dgemm(MPI_Comm comm, double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                        const Options& opts) {
  Breakdown own;
  Breakdown& bd = opts.breakdown ? *opts.breakdown : own;
  bd = Breakdown{};
  const double t0 = MPI_Wtime();
  const Problem pb = share_problem(comm, alpha, A, B, beta, C);
  int p = 1, rank = 0;
  LAB_MPI_CHECK(MPI_Comm_size(comm, &p));
  LAB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  if (opts.grid.given()) validate_grid(opts.grid, p);  // the same values, the same verdict, on every rank
  if (pb.m == 0 || pb.n == 0 || pb.k == 0 || pb.alpha == 0.0) {
    if (rank == 0) gemm_quick_return(alpha, A, B, beta, C);
    return;
  }

  Cube cube;
  bd.grid = opts.grid;
  all_or_none(comm, [&] {
    if (!bd.grid.given()) bd.grid = choose_grid(p, pb.m, pb.n, pb.k);
    validate_grid(bd.grid, p);
    cube = make_cube(comm, bd.grid);
    local_setup(opts.local, comm);
  });
  const Cuts cut{{pb.m, bd.grid.px}, {pb.n, bd.grid.py}, {pb.k, bd.grid.pz}};
  bd.seconds[kSetup] = MPI_Wtime() - t0;

  Matrix a, b, c;  // this rank's A_xz, B_zy and C_xy
  phase(comm, cube, bd, kScatter, [&](Traffic& t) { scatter_inputs(cube, cut, pb, A, B, C, a, b, c, t); });
  phase(comm, cube, bd, kBroadcast, [&](Traffic& t) { broadcast_blocks(cube, cut, a, b, t); });
  phase(comm, cube, bd, kCompute, [&](Traffic&) { multiply_blocks(cube, cut, pb, opts, a, b, c); });
  a = Matrix();  // done with the inputs: free their memory before C comes back
  b = Matrix();
  phase(comm, cube, bd, kReduce, [&](Traffic& t) { reduce_blocks(cube, c, t); });
  phase(comm, cube, bd, kGather, [&](Traffic& t) {
    if (cube.z == 0) gather_blocks(cube.face_c, c.cview(), C, cut.m, 0, cut.n, 1, t);
  });
}
