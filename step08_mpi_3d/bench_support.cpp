// Small pieces of the benchmark shared by the implementations' runs and ScaLAPACK's.
#include <algorithm>
#include <numeric>

#include "implementations.hpp"

namespace lab::step08 {

size_t median_index(const std::vector<double>& samples) {
  std::vector<size_t> order(samples.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return samples[a] < samples[b]; });
  return order.empty() ? 0 : order[(order.size() - 1) / 2];
}

std::vector<Breakdown> gather_breakdowns(const Breakdown& mine, const Grid& grid) {
  // seconds, own seconds, then sent and received bytes, per phase
  constexpr int kPacked = 4 * kPhases;
  double packed[kPacked];
  for (int p = 0; p < kPhases; ++p) {
    packed[p] = mine.seconds[p];
    packed[kPhases + p] = mine.own[p];
    packed[2 * kPhases + p] = double(mine.traffic[p].sent);
    packed[3 * kPhases + p] = double(mine.traffic[p].recv);
  }
  int rank = 0, size = 1;
  LAB_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  LAB_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  std::vector<double> all(rank == 0 ? size_t(kPacked) * size : 0);
  LAB_MPI_CHECK(MPI_Gather(packed, kPacked, MPI_DOUBLE, all.data(), kPacked, MPI_DOUBLE, 0, MPI_COMM_WORLD));
  std::vector<Breakdown> out;
  for (int q = 0; rank == 0 && q < size; ++q) {
    const double* in = &all[size_t(q) * kPacked];
    Breakdown b;
    b.grid = grid;
    for (int p = 0; p < kPhases; ++p) {
      b.seconds[p] = in[p];
      b.own[p] = in[kPhases + p];
      b.traffic[p].sent = int64_t(in[2 * kPhases + p]);
      b.traffic[p].recv = int64_t(in[3 * kPhases + p]);
    }
    out.push_back(b);
  }
  return out;
}

}  // namespace lab::step08
