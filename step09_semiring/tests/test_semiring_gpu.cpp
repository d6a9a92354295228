// step09 tests (GPU): gemm_device for every semiring, FP64 and int32, through
// host copies: every shape of the contract cases, accumulating and not; shapes
// of many blocks and slices with a ragged k; infinities, NaN and -inf;
// int32 saturation; bad arguments. Min-plus, max-plus and int32 results
// compare for exact equality with the reference. Without a GPU every test
// skips, the run ends with LAB-SKIP and ctest reports it skipped.
#include <cuda_runtime_api.h>

#include <limits>
#include <string>
#include <vector>

#include "lab/cuda.hpp"
#include "semiring_cuda.hpp"
#include "semiring_testing.hpp"

using step09_testing::HostGemm;
using step09_testing::Shape;
namespace s9 = lab::step09;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool skip_without_gpu() {
  return lab::testing::skip_if_unavailable(
      lab::testing::Subject{nullptr, [](std::string* why) { return lab::cuda::device_available(why); }});
}

// Elements from the first to the last of a view: ld * (cols - 1) + rows.
template <class T>
size_t span(lab::View<const T> v) {
  return v.rows > 0 && v.cols > 0 ? size_t(v.ld * (v.cols - 1) + v.rows) : 0;
}

// A device copy of an int32 view's whole span (guard cells between columns
// included, so that they round-trip), shaped like it: what
// lab::cuda::run_on_host_views does for doubles.
template <class T>
struct Mirror {
  lab::cuda::DeviceBuffer<T> buf;
  lab::View<T> dev;
  Mirror(lab::View<const T> h, cudaStream_t s) : buf(span(h)), dev{buf.data(), h.rows, h.cols, h.ld} {
    if (buf.size() > 0)
      LAB_CUDA_CHECK(cudaMemcpyAsync(buf.data(), h.data, sizeof(T) * buf.size(), cudaMemcpyHostToDevice, s));
  }
};

/// gemm_device<S> on host views: copy in, run on a fresh stream, copy C back.
/// FP64 goes through the harness's adapter (lab::cuda::run_on_host_views,
/// which also passes views that are bad on their own to the kernel's check).
template <class S>
HostGemm<S> on_device() {
  using T = typename S::value_type;
  if constexpr (std::is_same_v<T, double>) {
    return [](lab::ConstMatView A, lab::ConstMatView B, lab::MatView C, bool accumulate) {
      lab::cuda::run_on_host_views(
          [](double, lab::ConstMatView a, lab::ConstMatView b, double beta, lab::MatView c, cudaStream_t s) {
            s9::gemm_device<S>(a, b, c, beta != 0.0, s);
          },
          1.0, A, B, accumulate ? 1.0 : 0.0, C);
    };
  } else {
    return [](lab::View<const T> A, lab::View<const T> B, lab::View<T> C, bool accumulate) {
      lab::cuda::Stream stream;
      Mirror<T> a(A, stream.get()), b(B, stream.get()), c(C, stream.get());
      s9::gemm_device<S>(a.dev, b.dev, c.dev, accumulate, stream.get());
      if (c.buf.size() > 0)
        LAB_CUDA_CHECK(cudaMemcpyAsync(C.data, c.buf.data(), sizeof(T) * c.buf.size(), cudaMemcpyDeviceToHost,
                                       stream.get()));
      stream.sync();
    };
  }
}

template <class S>
void run_both(const Shape& shape) {
  for (bool accumulate : {false, true})
    step09_testing::run_shape<S>(on_device<S>(), shape, accumulate, lab::testing::fresh_seed());
}

enum class Ring { minplus, maxplus, plustimes, minplus_i32 };
const char* ring_name(Ring r) {
  return r == Ring::minplus ? "minplus" : r == Ring::maxplus ? "maxplus" : r == Ring::plustimes ? "plustimes" : "minplus_i32";
}

void run_ring(Ring r, const Shape& s) {
  switch (r) {
    case Ring::minplus:
      return run_both<s9::MinPlus>(s);
    case Ring::maxplus:
      return run_both<s9::MaxPlus>(s);
    case Ring::plustimes:
      return run_both<s9::PlusTimes>(s);
    case Ring::minplus_i32:
      return run_both<s9::MinPlusI32>(s);
  }
}

struct Case {
  Ring ring;
  Shape shape;
};

std::vector<Case> cases() {
  // Beyond the contract's sizes: many 128 x 64 block tiles and 16-wide slices
  // of k, an exact tile, a ragged k, a long k, thin shapes.
  std::vector<Shape> shapes = step09_testing::contract_shapes();
  for (const Shape& s : {Shape{300, 200, 100, 3}, Shape{128, 64, 16, 0}, Shape{257, 129, 1000, 1},
                         Shape{1, 1, 5000, 0}, Shape{700, 5, 33, 0}, Shape{5, 700, 47, 2}})
    shapes.push_back(s);
  std::vector<Case> out;
  for (Ring r : {Ring::minplus, Ring::maxplus, Ring::plustimes, Ring::minplus_i32})
    for (const Shape& s : shapes) out.push_back({r, s});
  return out;
}

[[maybe_unused]] void PrintTo(const Case& c, std::ostream* os) {
  *os << ring_name(c.ring) << " " << step09_testing::shape_name(c.shape);
}

class Step09Gpu : public ::testing::TestWithParam<Case> {};

}  // namespace

TEST_P(Step09Gpu, MatchesReference) {
  if (skip_without_gpu()) return;
  run_ring(GetParam().ring, GetParam().shape);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Step09Gpu, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(ring_name(info.param.ring)) + "_" +
                                  step09_testing::shape_name(info.param.shape) + "_" + std::to_string(info.index);
                         });

TEST(Step09GpuInfinity, InfiniteRowsColumnsAndBlocks) {
  if (skip_without_gpu()) return;
  const Shape shape{230, 150, 61, 1};
  for (bool accumulate : {false, true}) {
    step09_testing::run_shape<s9::MinPlus>(on_device<s9::MinPlus>(), shape, accumulate, lab::testing::fresh_seed(),
                                           [](lab::MatView A, lab::MatView B) { step09_testing::cut_paths(A, B, kInf); });
    step09_testing::run_shape<s9::MinPlusI32>(
        on_device<s9::MinPlusI32>(), shape, accumulate, lab::testing::fresh_seed(),
        [](lab::View<int32_t> A, lab::View<int32_t> B) { step09_testing::cut_paths(A, B, s9::MinPlusI32::kInf); });
  }
  // and independently of the reference: no path through row 3
  lab::Matrix A(40, 20), B(20, 30), C(40, 30);
  A.fill_random(lab::testing::fresh_seed());
  B.fill_random(lab::testing::fresh_seed());
  for (int64_t q = 0; q < 20; ++q) A(3, q) = kInf;
  on_device<s9::MinPlus>()(A.cview(), B.cview(), C.view(), false);
  for (int64_t j = 0; j < 30; ++j) EXPECT_EQ(C(3, j), kInf) << "C(3, " << j << ")";
}

TEST(Step09GpuInfinity, NanAndMinusInfinityReadAsDocumented) {
  if (skip_without_gpu()) return;
  const uint64_t seed = lab::testing::fresh_seed();
  const Shape shape{150, 90, 70, 1};
  for (bool accumulate : {false, true}) {
    step09_testing::run_shape<s9::MinPlus>(on_device<s9::MinPlus>(), shape, accumulate, seed,
                                           step09_testing::scatter_specials(seed));
    step09_testing::run_shape<s9::MaxPlus>(on_device<s9::MaxPlus>(), shape, accumulate, seed,
                                           step09_testing::scatter_specials(seed));
  }
}

TEST(Step09GpuInt32, SumsAboveTheRangeSaturateToInfinity) {
  if (skip_without_gpu()) return;
  using I = s9::MinPlusI32;
  // Near the top of the domain every sum exceeds kMax: all of C is "no path";
  // one small column of B brings some rows back.
  const Shape shape{70, 40, 30, 0};
  auto tweak = [](lab::View<int32_t> A, lab::View<int32_t> B) {
    for (int64_t j = 0; j < A.cols; ++j)
      for (int64_t i = 0; i < A.rows; ++i) A(i, j) = I::kMax - int32_t(i);
    for (int64_t j = 0; j < B.cols; ++j)
      for (int64_t q = 0; q < B.rows; ++q) B(q, j) = j == 7 ? -I::kMax : 100 + int32_t(q);
  };
  for (bool accumulate : {false, true})
    step09_testing::run_shape<I>(on_device<I>(), shape, accumulate, lab::testing::fresh_seed(), tweak);
  std::vector<int32_t> a(70 * 30), b(30 * 40), c(70 * 40);
  lab::View<int32_t> A{a.data(), 70, 30, 70}, B{b.data(), 30, 40, 30}, C{c.data(), 70, 40, 70};
  tweak(A, B);
  on_device<I>()(A, B, C, false);
  EXPECT_EQ(C(0, 0), I::kInf);
  EXPECT_EQ(C(69, 39), I::kInf);
  EXPECT_EQ(C(0, 7), 0);  // A(0, q) + B(q, 7) = kMax - kMax
}

TEST(Step09GpuArguments, BadArgumentsThrow) {
  if (skip_without_gpu()) return;
  step09_testing::bad_arguments<s9::MinPlus>(on_device<s9::MinPlus>());
  step09_testing::bad_arguments<s9::MaxPlus>(on_device<s9::MaxPlus>());
  step09_testing::bad_arguments<s9::PlusTimes>(on_device<s9::PlusTimes>());
  // int32: a shape mismatch, before anything is queued
  lab::cuda::DeviceBuffer<int32_t> buf(64);
  const lab::View<const int32_t> A{buf.data(), 4, 3, 4}, B{buf.data(), 2, 4, 2};
  const lab::View<int32_t> C{buf.data(), 4, 4, 4};
  EXPECT_THROW(s9::gemm_device<s9::MinPlusI32>(A, B, C, false, nullptr), std::invalid_argument);
}
