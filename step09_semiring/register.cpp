// The variants of step09, as the benchmark CLI and the ladder know them.
//
// The shared benchmark calls every variant as C <- alpha A B + beta C with
// alpha = 1 and beta = 0.5; a semiring variant reads beta != 0 as
// "accumulate" and is checked by its own rule (reference.hpp: exact for
// min/max). GFLOP/s are 2 mnk / time for every semiring alike.
//   minplus, maxplus, plustimes        CPU, the micro-kernel step04 chose for this CPU
//   minplus_<isa>                      CPU, with each kernel this CPU runs (to compare)
//   step04_dgemm                       step04's DGEMM in the same run: min-plus's yardstick
//   minplus_gpu, maxplus_gpu, plustimes_gpu, minplus_i32_dpx   GPU (builds with CUDA)
#include <omp.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference.hpp"
#include "semiring.hpp"
#include "semiring_kernel.hpp"
#include "ways.hpp"  // step04: the ways of the threads
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

// --tile mc,nc,kc, or none (std::nullopt: step04's blocks for the kernel and the product).
std::optional<lab::step04::Blocking> tile_blocks(const lab::Params* params) {
  const std::vector<int64_t>& t = params ? params->tile : std::vector<int64_t>{};
  if (!t.empty() && t.size() != 3) throw std::invalid_argument("--tile: step09 takes mc,nc,kc");
  if (t.empty()) return std::nullopt;
  return lab::step04::Blocking{t[0], t[1], t[2]};
}

// "avx512 16x14 kernel; step04's blocks for it" (the blocks themselves are on
// the banner's tiles line).
std::string describe(Isa isa, const lab::Params& params) {
  const s9::MicroKernel uk = s9::microkernel<s9::MinPlus>(isa);
  return std::string(lab::step04::isa_name(isa)) + " " + std::to_string(uk.mr) + "x" + std::to_string(uk.nr) +
         " kernel" + (params.tile.empty() ? "; step04's blocks for it" : "");
}

// The kernel that runs where no instruction set is named, and why: step04's
// choice for its DGEMM (its figures are DGEMM's), or WAIT while step04's
// kernels are TODOs (then the choice is a narrower kernel than this CPU has).
std::string chosen(const lab::Params& p) {
  const std::vector<s9::Step04Todo> todo = s9::step04_kernels_todo();
  if (todo.empty()) {
    const std::string why = lab::step04::kernel_choice().why;  // "measured on one core: avx512 127.8, ..."
    return describe(lab::step04::best_isa(), p) + "; the instruction set step04 chose for DGEMM (" +
           (why.rfind("measured", 0) == 0 ? "its DGEMM kernels " : "") + why + ")";
  }
  std::string isas;
  for (const s9::Step04Todo& t : todo)
    isas += std::string(isas.empty() ? "" : " and ") + lab::step04::isa_name(t.isa);
  return describe(lab::step04::best_isa(), p) + "; WAIT, needs step04: step09 runs the instruction set step04 " +
         "chose for DGEMM, and step04's " + isas + " kernel" + (todo.size() > 1 ? "s are" : " is") +
         " not implemented yet, so step09's " + isas + " kernel" + (todo.size() > 1 ? "s are" : " is") +
         " not used (finish them: ./lab test step04)";
}

// `isa` empty: the kernel step04 chose for this CPU (decided on first use, not here).
template <class S>
void add_cpu(std::optional<Isa> isa) {
  const std::string name = isa ? std::string(S::name) + "_" + lab::step04::isa_name(*isa) : S::name;
  auto which = [isa] { return isa ? *isa : lab::step04::best_isa(); };
  lab::Variant v{"step09", name, LAB_IMPL_NAME, lab::Backend::cpu,
                 [which](const GemmCall& c) {
                   const auto tile = tile_blocks(c.params);
                   s9::gemm_with<S>(c.A, c.B, c.C, accumulate_of(c), which(),
                                    tile ? *tile : lab::step04::default_blocking(which(), c.C.rows, c.C.cols, c.A.cols));
                 },
                 std::string(S::name) + " on step04's packed panels, " +
                     (isa ? std::string(lab::step04::isa_name(*isa)) : "step04's chosen") +
                     " micro-kernel, OpenMP (--tile mc,nc,kc)",
                 [which, isa](const lab::Params& p) { return isa ? describe(which(), p) : chosen(p); }};
  v.check = check<S>;
  // The banner's plan line: how the threads share the loops at this size.
  v.plan = [which](const lab::Params& p, int64_t m, int64_t n, int64_t k) {
    const s9::MicroKernel uk = s9::microkernel<S>(which());
    const int available = p.threads > 0 ? p.threads : omp_get_max_threads();
    const auto tile = tile_blocks(&p);
    const lab::step04::Blocking blk = tile ? *tile : lab::step04::default_blocking(which(), available, m, n, k);
    return lab::step04::describe_for(lab::step04::layout_for_call(available, m, n, k, uk.mr, uk.nr, blk), m, n);
  };
  v.tiles = {{"mc", "nc", "kc"}, 3, [which](const lab::Params& p) {
               const auto tile = tile_blocks(&p);
               if (!tile) return lab::step04::describe_default_blocking(which());
               return lab::format_tiles({"mc", "nc", "kc"}, {tile->mc, tile->nc, tile->kc});
             }};
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
  add_cpu<s9::MinPlus>(std::nullopt);
  add_cpu<s9::MaxPlus>(std::nullopt);
  add_cpu<s9::PlusTimes>(std::nullopt);
  for (Isa isa : lab::step04::kIsas)
    if (lab::step04::isa_supported(isa)) add_cpu<s9::MinPlus>(isa);
  lab::register_variant({"step09", "step04_dgemm", LAB_IMPL_NAME, lab::Backend::cpu,
                         [](const GemmCall& c) { lab::step04::dgemm(c.alpha, c.A, c.B, c.beta, c.C); },
                         "step04's DGEMM (this build's), the rate min-plus is measured against",
                         [](const lab::Params&) { return "step04's dgemm; " + lab::step04::kernel_choice().why; }});
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
