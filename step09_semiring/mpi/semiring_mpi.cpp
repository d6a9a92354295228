// The semiring product on step08's cube: step08's multiply_blocks with step09's
// local product and the semiring's reduction. Nothing here to write (the
// student's part is step09's kernels, and step08's cube before them); compiled
// with each implementation, whose gemm<S> and multiply_blocks it calls.
#include "semiring_mpi.hpp"

#include <omp.h>

#include "transport.hpp"  // step08: HostTransport
#if LAB_STEP09_MPI_DEVICE
#include "semiring_cuda.hpp"
#endif

namespace lab::step09::mpi {
inline namespace LAB_IMPL_NS {

namespace {

// The local product of multiply_blocks: into_c is true on the z = 0 layer only,
// where C is combined with the result when accumulating; every other layer
// writes a scratch block without reading it.
template <class S>
step08::Product<typename S::value_type> host_product(bool accumulate, int threads) {
  using T = typename S::value_type;
  step08::Product<T> p;
  p.run = [accumulate, threads](View<const T> a, View<const T> b, View<T> c, bool into_c, void*) {
    if (threads > 0) omp_set_num_threads(threads);
    lab::step09::gemm<S>(a, b, c, into_c && accumulate);
  };
  p.reads_c = accumulate;  // accumulate == false never reads C, not even a copy of it
  return p;
}

}  // namespace

template <class S>
void gemm(const step08::Plan& plan, View<const typename S::value_type> A, View<const typename S::value_type> B,
          View<typename S::value_type> C, bool accumulate, const Options& opts) {
  using T = typename S::value_type;
  const SemiringOp<S> op(opts.user_op);
  step08::HostTransport<T> transport(plan.workspace(), op.reduction());
  step08::multiply_blocks<T>(plan, transport, A, B, C, host_product<S>(accumulate, opts.threads), opts.breakdown);
}

#if LAB_STEP09_MPI_DEVICE
template <class S>
void gemm_device(const step08::Plan& plan, step08::DeviceContext& dev, View<const typename S::value_type> A,
                 View<const typename S::value_type> B, View<typename S::value_type> C, bool accumulate,
                 const Options& opts) {
  using T = typename S::value_type;
  const SemiringOp<S> op(opts.user_op);
  step08::all_or_none(plan.cube().cart.get(), [&] {
    if (dev.uses_nccl() && !op.has_nccl())
      throw std::invalid_argument(std::string("gemm_device<") + S::name +
                                  ">: a user-defined reduction has no NCCL form; make the DeviceContext with "
                                  "Transfer::mpi");
  });
  step08::DeviceTransport<T> transport(dev, op.reduction());
  step08::Product<T> p;
  p.run = [accumulate](View<const T> a, View<const T> b, View<T> c, bool into_c, void* stream) {
    lab::step09::gemm_device<S>(a, b, c, into_c && accumulate, static_cast<cudaStream_t>(stream));
  };
  p.reads_c = accumulate;
  step08::multiply_blocks<T>(plan, transport, A, B, C, p, opts.breakdown);
}
#endif

#if LAB_STEP09_MPI_DEVICE
#define LAB_STEP09_MPI_INSTANTIATE_DEVICE(S)                                                                  \
  template void gemm_device<S>(const step08::Plan&, step08::DeviceContext&, View<const double>,              \
                               View<const double>, View<double>, bool, const Options&);
#else
#define LAB_STEP09_MPI_INSTANTIATE_DEVICE(S)
#endif
#define LAB_STEP09_MPI_INSTANTIATE(S)                                                                         \
  template void gemm<S>(const step08::Plan&, View<const double>, View<const double>, View<double>, bool,     \
                        const Options&);                                                                       \
  LAB_STEP09_MPI_INSTANTIATE_DEVICE(S)
LAB_STEP09_MPI_INSTANTIATE(PlusTimes)
LAB_STEP09_MPI_INSTANTIATE(MinPlus)
LAB_STEP09_MPI_INSTANTIATE(MaxPlus)

}  // namespace LAB_IMPL_NS
}  // namespace lab::step09::mpi
