// step08_mpi_3d — TODO for the student: DGEMM on a px x py x pz cube of ranks.
//
// What to do: fill in the marked parts below, top to bottom, then choose_grid.cpp.
// Read the handout (step08_mpi_3d/README.md) first: it walks through the cube. In
// one paragraph: the rank at (x, y, z) multiplies A_xz (row block x, k-block z of A)
// by B_zy (k-block z, column block y of B). A lives on the y = 0 face and is
// broadcast along y, B lives on the x = 0 face and is broadcast along x; the pz
// partial products of C_xy are combined along z onto the z = 0 face, where C lives.
//
// The parts:
//   1. make_cube: the Cartesian communicator and its faces and fibres (the Plan keeps them);
//   2. multiply_blocks: the broadcasts, the local product, the reduction, on blocks
//      that already live on their ranks (written once for host and GPU memory: the
//      Transport moves the blocks, the Product multiplies them);
//   3. scatter_blocks and gather_blocks: the rank-0 entry dgemm, which hands rank
//      0's full matrices to the face ranks and back, around multiply_blocks.
// Every phase runs on every rank (ranks with nothing to do in it just return), and
// a failure on one rank is raised on all.
//
// Test:   ./lab test step08
// Time:   mpiexec -n 4 --oversubscribe build/student/bin/step08_mpi_3d --n 1024 --threads 1 --impl student
#include <mpi.h>

#include <memory>
#include <string>
#include <utility>

#include "comm.hpp"
#include "grid.hpp"
#include "lab/gemm_args.hpp"
#include "mpi3d.hpp"
#include "transport.hpp"

namespace lab::step08 {
namespace {

Cube make_cube(MPI_Comm comm, const Grid& g) {
  Cube c;
  // TODO: MPI_Cart_create with dims {px, py, pz}; MPI_Cart_sub for 3 faces and 3 fibres
  LAB_TODO(
      "step08 make_cube: MPI_Cart_create (reorder = 0), MPI_Cart_coords, and MPI_Cart_sub for the faces "
      "and fibres");
  // Names for the watchdog's note (tests/mpi_test_main.cpp): which fibre a rank waits in.
  c.fibre_a.set_label("fibre_a (along y)");
  c.fibre_b.set_label("fibre_b (along x)");
  c.fibre_c.set_label("fibre_c (along z)");
  return c;
}

// Runs one phase on every rank, books its time and traffic, and lets no rank go on
// when another failed. `own` is this rank's time in it; `seconds` lasts until every
// rank agreed, so it is the slowest rank's.
template <class F>
void phase(const Plan& plan, Breakdown& bd, Phase ph, F&& fn) {
  const Cube& c = plan.cube();
  note_progress(phase_name(ph), plan.grid(), c.x, c.y, c.z);
  const double t0 = MPI_Wtime();
  all_or_none(c.cart.get(), [&] {
    fn(bd.traffic[ph]);
    bd.own[ph] += MPI_Wtime() - t0;
    note_step("done, waiting for the other ranks to finish it");
  });
  bd.seconds[ph] += MPI_Wtime() - t0;
}

template <class T>
View<const T> as_const(View<T> v) {
  return {v.data, v.rows, v.cols, v.ld};
}

// Throws std::invalid_argument naming the block unless `v` has the shape of `b`.
template <class T>
void check_block(View<T> v, const Block& b, const char* name, const Plan& plan) {
  if (!b.held) return;
  const std::string who = std::string(name) + " on rank " + std::to_string(plan.rank()) + " (block at row " +
                          std::to_string(b.row0) + ", column " + std::to_string(b.col0) + ")";
  if (v.rows != b.rows || v.cols != b.cols)
    throw std::invalid_argument(who + " must be " + std::to_string(b.rows) + " x " + std::to_string(b.cols) +
                                ", got " + std::to_string(v.rows) + " x " + std::to_string(v.cols));
  if (v.ld < std::max<int64_t>(1, v.rows))
    throw std::invalid_argument(who + ": ld " + std::to_string(v.ld) + " is smaller than its rows");
  if (v.rows > 0 && v.cols > 0 && v.data == nullptr) throw std::invalid_argument(who + ": data is null");
}

// The block of face rank r: face coordinate `row_dim` picks its row block, `col_dim`
// its column block (a face of a Cartesian communicator is Cartesian too).
[[maybe_unused]] std::pair<int, int> block_of(const Comm& face, int r, int row_dim, int col_dim) {
  int cc[2];
  LAB_MPI_CHECK(MPI_Cart_coords(face.get(), r, 2, cc));
  return {cc[row_dim], cc[col_dim]};
}

// Face rank 0 holds the full matrix M. It keeps its own block where it lies in M
// (returned as a view into M); every other rank of the face receives its block
// into `buffer` (contiguous) and gets a view of that.
ConstMatView scatter_blocks(const Comm& face, ConstMatView M, Split rows, int row_dim, Split cols, int col_dim,
                            Matrix& buffer, Traffic& t) {
  // TODO: face rank 0: mpi::isend the others their blocks (straight from M), wait; others: recv
  LAB_TODO(
      "step08 scatter_blocks: face rank 0 sends every other rank its block of M, the others receive theirs");
}

// The mirror of scatter_blocks: every other rank of the face sends its block, face
// rank 0 receives each one into its place in M (its own is there already).
// Nothing outside M's rows x cols region is written.
void gather_blocks(const Comm& face, ConstMatView mine, MatView M, Split rows, int row_dim, Split cols,
                   int col_dim, Traffic& t) {
  // TODO: face rank 0: mpi::irecv the blocks into place in M, wait; others: mpi::send theirs
  LAB_TODO(
      "step08 gather_blocks: face rank 0 receives every other rank's block into its place in M, "
      "the others send");
}

}  // namespace

inline namespace LAB_IMPL_NS {

Plan::Plan(MPI_Comm comm, int64_t m, int64_t n, int64_t k, Grid grid) {
  int p = 1;
  LAB_MPI_CHECK(MPI_Comm_size(comm, &p));
  LAB_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
  all_or_none(comm, [&] {
    if (m < 0 || n < 0 || k < 0)
      throw std::invalid_argument("Plan: m, n and k must be >= 0, got " + std::to_string(m) + ", " +
                                  std::to_string(n) + ", " + std::to_string(k));
    if (!grid.given()) grid = choose_grid(p, m, n, k);
    validate_grid(grid, p);
  });
  layout_ = Layout{grid, m, n, k};
  all_or_none(comm, [&] { cube_ = make_cube(comm, grid); });
}

template <class T>
void multiply_blocks(const Plan& plan, Transport<T>& tr, View<const T> A, View<const T> B, View<T> C,
                     const Product<T>& product, Breakdown* breakdown) {
  Breakdown own;
  Breakdown& bd = breakdown ? *breakdown : own;
  bd.grid = plan.grid();
  const Cube& cube = plan.cube();
  const Layout& lay = plan.layout();
  const Block c_work = lay.c_work(plan.rank());
  phase(plan, bd, kSetup, [&](Traffic&) {
    check_block(A, plan.a_block(), "A", plan);
    check_block(B, plan.b_block(), "B", plan);
    check_block(C, plan.c_block(), "C", plan);
  });
  if (lay.m == 0 || lay.n == 0) return;

  // The blocks this rank multiplies: its own where it holds them (used where they
  // lie, any ld), scratch from the transport where it receives them.
  // The broadcast only reads the root's block, so its const can go.
  [[maybe_unused]] View<T> a{const_cast<T*>(A.data), A.rows, A.cols, A.ld};
  [[maybe_unused]] View<T> b{const_cast<T*>(B.data), B.rows, B.cols, B.ld};
  phase(plan, bd, kBroadcast, [&](Traffic& t) {
    // TODO: off the faces: a = tr.scratch(0, ...), b = tr.scratch(1, ...); tr.bcast A along fibre_a, B along fibre_b
    LAB_TODO("step08 multiply_blocks: scratch blocks off the faces, then tr.bcast A along y and B along x");
    tr.finish();
  });

  // The reduction wants contiguous blocks; a strided C on the z = 0 face is then
  // combined in scratch and copied back (pz = 1 never needs it: nothing to combine).
  const bool staged = cube.z == 0 && plan.grid().pz > 1 && !mpi::contiguous(C);
  View<T> c = cube.z == 0 && !staged ? C : tr.scratch(2, c_work.rows, c_work.cols);
  phase(plan, bd, kProduct, [&](Traffic&) {
    if (staged && product.reads_c) tr.copy(as_const(C), c);
    // TODO: product.run(a, b, c, into_c, tr.stream()): into_c (combine with C) on the z = 0 layer only
    LAB_TODO(
        "step08 multiply_blocks: product.run(a, b, c, into_c, tr.stream()) with into_c on the z = 0 "
        "layer only");
    tr.finish();
  });

  phase(plan, bd, kReduce, [&](Traffic& t) {
    // TODO: tr.reduce the partial C blocks along fibre_c onto its rank 0 (z = 0)
    LAB_TODO("step08 multiply_blocks: combine the partial C blocks along z with tr.reduce");
    if (staged) tr.copy(as_const(c), C);
    tr.finish();
  });
}

// The element types the lab multiplies (doubles; step09's min-plus on int32 too).
template void multiply_blocks<double>(const Plan&, Transport<double>&, View<const double>, View<const double>,
                                      View<double>, const Product<double>&, Breakdown*);
template void multiply_blocks<float>(const Plan&, Transport<float>&, View<const float>, View<const float>,
                                     View<float>, const Product<float>&, Breakdown*);
template void multiply_blocks<int32_t>(const Plan&, Transport<int32_t>&, View<const int32_t>,
                                       View<const int32_t>, View<int32_t>, const Product<int32_t>&, Breakdown*);
template void multiply_blocks<int64_t>(const Plan&, Transport<int64_t>&, View<const int64_t>,
                                       View<const int64_t>, View<int64_t>, const Product<int64_t>&, Breakdown*);

void dgemm(MPI_Comm comm, double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
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
  const Plan plan(comm, pb.m, pb.n, pb.k, opts.grid);
  bd.grid = plan.grid();
  bd.seconds[kSetup] = bd.own[kSetup] = MPI_Wtime() - t0;
  const Cube& cube = plan.cube();
  const Layout& lay = plan.layout();

  // This rank's blocks: views into A, B and C on rank 0, received buffers elsewhere.
  Matrix a_buf, b_buf, c_buf;
  ConstMatView a{nullptr, 0, 0, 1}, b{nullptr, 0, 0, 1};
  MatView c{nullptr, 0, 0, 1};
  phase(plan, bd, kScatter, [&](Traffic& t) {
    // The face coordinates are the kept dimensions in order: face_a is (x, z),
    // face_b is (y, z), face_c is (x, y).
    if (cube.y == 0) a = scatter_blocks(cube.face_a, A, lay.rows(), 0, lay.inner(), 1, a_buf, t);
    if (cube.x == 0) b = scatter_blocks(cube.face_b, B, lay.inner(), 1, lay.cols(), 0, b_buf, t);
    if (cube.z != 0) return;
    if (pb.beta != 0.0) {  // beta == 0 must not read C: then it is not sent at all
      const ConstMatView mine = scatter_blocks(cube.face_c, C, lay.rows(), 0, lay.cols(), 1, c_buf, t);
      c = rank == 0 ? C.block(0, 0, mine.rows, mine.cols) : c_buf.view();
    } else {
      const Block cb = plan.c_block();
      if (rank == 0) {
        c = C.block(0, 0, cb.rows, cb.cols);
      } else {
        c_buf = Matrix(cb.rows, cb.cols);
        c = c_buf.view();
      }
    }
  });
  Options inner = opts;
  inner.breakdown = &bd;
  multiply(plan, pb.alpha, a, b, pb.beta, c, inner);
  phase(plan, bd, kGather, [&](Traffic& t) {
    if (cube.z == 0) gather_blocks(cube.face_c, c, C, lay.rows(), 0, lay.cols(), 1, t);
  });
}

}  // namespace LAB_IMPL_NS
}  // namespace lab::step08
