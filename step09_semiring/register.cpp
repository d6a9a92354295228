// The variants of step09, as the benchmark CLI and the ladder know them.
//
// The shared benchmark calls every variant as C <- alpha A B + beta C with
// alpha = 1 and beta = 0.5; a semiring variant reads beta != 0 as
// "accumulate" and is checked by its own rule (reference.hpp: exact for
// min/max). GFLOP/s are 2 mnk / time for every semiring alike.
//   minplus, maxplus, plustimes        CPU, the widest micro-kernel this CPU runs
//   minplus_<isa>                      CPU, with a narrower kernel (to compare)
//   step04_dgemm                       step04's DGEMM in the same run: min-plus's yardstick
//   minplus_gpu, maxplus_gpu, plustimes_gpu, minplus_i32_dpx   GPU (builds with CUDA)
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference.hpp"
#include "semiring.hpp"
#ifdef LAB_STEP09_GPU
#include "i32_bench.hpp"
#include "semiring_cuda.hpp"
#endif

namespace {

using lab::GemmCall;
using lab::step04::Isa;
namespace s9 = lab::step09;

bool accumulate_of(const GemmCall& c) {
  if (c.alpha != 1.0)
    throw std::invalid_argument("alpha: a semiring product has no alpha (the benchmark passes 1)");
  return c.beta != 0.0;
}

template <class S>
lab::CheckResult check(double, lab::ConstMatView A, lab::ConstMatView B, double beta, lab::ConstMatView C0,
                       lab::ConstMatView C, bool full) {
  return s9::check_semiring<S>(A, B, C0, C, beta != 0.0, full);
}

// --tile mc,nc,kc replaces the default cache blocks, as in step04.
lab::step04::Blocking blocks(Isa isa, const GemmCall& c) {
  lab::step04::Blocking b = lab::step04::default_blocking(isa);
  const std::vector<int64_t>& t = c.params ? c.params->tile : std::vector<int64_t>{};
  if (!t.empty() && t.size() != 3) throw std::invalid_argument("--tile: step09 takes mc,nc,kc");
  if (t.size() == 3) b = {t[0], t[1], t[2]};
  return b;
}

template <class S>
void add_cpu(Isa isa, bool best) {
  const std::string isa_name = lab::step04::isa_name(isa);
  lab::Variant v{"step09",
                 best ? std::string(S::name) : std::string(S::name) + "_" + isa_name,
                 LAB_IMPL_NAME,
                 lab::Backend::cpu,
                 [isa](const GemmCall& c) { s9::gemm_with<S>(c.A, c.B, c.C, accumulate_of(c), isa, blocks(isa, c)); },
                 std::string(S::name) + " on step04's packed panels, " + isa_name +
                     " micro-kernel, OpenMP (--tile mc,nc,kc)"};
  v.check = check<S>;
  lab::register_variant(std::move(v));
}

#ifdef LAB_STEP09_GPU
template <class S>
void add_gpu(const char* about) {
  lab::Variant v{"step09", std::string(S::name) + "_gpu", LAB_IMPL_NAME, lab::Backend::gpu,
                 [](const GemmCall& c) {
                   s9::gemm_device<S>(c.A, c.B, c.C, accumulate_of(c), static_cast<cudaStream_t>(c.stream));
                 },
                 about};
  v.check = check<S>;
  lab::register_variant(std::move(v));
}

// The integer variant's result against the reference on the same integers.
lab::CheckResult check_i32(double, lab::ConstMatView A, lab::ConstMatView B, double beta, lab::ConstMatView C0,
                           lab::ConstMatView C, bool full) {
  auto ints = [](lab::ConstMatView x) {
    std::vector<int32_t> out(size_t(x.rows * x.cols));
    for (int64_t j = 0; j < x.cols; ++j)
      for (int64_t i = 0; i < x.rows; ++i) out[size_t(i + j * x.rows)] = s9::to_i32(x(i, j));
    return out;
  };
  auto view = [](const std::vector<int32_t>& v, lab::ConstMatView like) {
    return lab::View<const int32_t>{v.data(), like.rows, like.cols, like.rows > 0 ? like.rows : 1};
  };
  const auto a = ints(A), b = ints(B), c0 = ints(C0), c = ints(C);
  return s9::check_semiring<s9::MinPlusI32>(view(a, A), view(b, B), view(c0, C0), view(c, C), beta != 0.0, full);
}
#endif

int register_all() {
  const Isa best = lab::step04::best_isa();
  add_cpu<s9::MinPlus>(best, true);
  add_cpu<s9::MaxPlus>(best, true);
  add_cpu<s9::PlusTimes>(best, true);
  for (Isa isa : {Isa::avx2, Isa::generic})
    if (isa != best && lab::step04::isa_supported(isa)) add_cpu<s9::MinPlus>(isa, false);
  lab::register_variant({"step09", "step04_dgemm", LAB_IMPL_NAME, lab::Backend::cpu,
                         [](const GemmCall& c) { lab::step04::dgemm(c.alpha, c.A, c.B, c.beta, c.C); },
                         "step04's DGEMM (this build's), the rate min-plus is measured against"});
#ifdef LAB_STEP09_GPU
  add_gpu<s9::MinPlus>("minplus on step06's register-blocked SIMT kernel: FP64 add, compare and select");
  add_gpu<s9::MaxPlus>("maxplus on step06's register-blocked SIMT kernel");
  add_gpu<s9::PlusTimes>("plustimes (DGEMM) on the same kernel, with FMA");
  auto scratch = std::make_shared<s9::I32Scratch>();
  lab::Variant v{"step09", "minplus_i32_dpx", LAB_IMPL_NAME, lab::Backend::gpu,
                 [scratch](const GemmCall& c) {
                   s9::minplus_i32_on_doubles(c.A, c.B, c.C, accumulate_of(c), *scratch,
                                              static_cast<cudaStream_t>(c.stream));
                 },
                 "int32 minplus (x * 2^20), DPX __viaddmin_s32 on sm_90; time includes the conversions"};
  v.check = check_i32;
  lab::register_variant(std::move(v));
#endif
  return 0;
}

[[maybe_unused]] const int registered = register_all();

}  // namespace
