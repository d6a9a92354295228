// The grader's refill between repeated speed-case calls (lab/refill.hpp) on a
// GPU: the device kernel must write the bits the checker computes on the host
// for the same key, or every GPU speed case of ./lab grade would fail its
// check of the last call. Skipped where no CUDA device is visible.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "contract.hpp"
#include "lab/cuda.hpp"
#include "lab/grade_wire.hpp"

namespace {

lab::testing::Subject device_subject() {
  lab::testing::Subject s;
  s.available = [](std::string* why) { return lab::cuda::device_available(why); };
  return s;
}

// Where the first element that differs is, or -1.
int64_t first_difference(const std::vector<double>& a, const std::vector<double>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(double)) != 0) return static_cast<int64_t>(i);
  return -1;
}

TEST(GraderRefill, TheDeviceWritesTheHostsBits) {
  if (lab::testing::skip_if_unavailable(device_subject())) return;
  // More elements than one pass of the kernel's largest grid (65535 blocks of
  // 256), and a count that is no multiple of anything: the grid-stride loop and
  // its end are both covered.
  const size_t count = size_t(65535) * 256 + 1001;
  lab::cuda::DeviceBuffer<double> x(count);
  std::vector<double> on_device(count), on_host(count);
  for (const uint64_t seed : {uint64_t(1), uint64_t(0x5eed5eed12345678ULL)}) {
    for (const int which : {0, 1}) {
      const uint64_t key = lab::wire::refill_key(seed, 3, which);
      lab::cuda::refill_device(x.data(), count, key, nullptr);
      LAB_CUDA_CHECK(cudaMemcpy(on_device.data(), x.data(), count * sizeof(double), cudaMemcpyDeviceToHost));
      lab::wire::refill(on_host.data(), count, key);
      const int64_t at = first_difference(on_device, on_host);
      ASSERT_EQ(-1, at) << "seed " << seed << ", which " << which << ": element " << at << " is "
                        << on_device[size_t(at)] << " on the device, " << on_host[size_t(at)] << " on the host";
    }
  }
}

TEST(GraderRefill, NothingPastTheCountIsWritten) {
  if (lab::testing::skip_if_unavailable(device_subject())) return;
  const size_t count = 1000, guard = 24;
  lab::cuda::DeviceBuffer<double> x(count + guard);
  LAB_CUDA_CHECK(cudaMemset(x.data(), 0xFF, (count + guard) * sizeof(double)));
  lab::cuda::refill_device(x.data(), count, lab::wire::refill_key(7, 2, 1), nullptr);
  lab::cuda::refill_device(x.data(), 0, lab::wire::refill_key(7, 3, 1), nullptr);  // nothing to do
  std::vector<double> back(count + guard);
  LAB_CUDA_CHECK(cudaMemcpy(back.data(), x.data(), back.size() * sizeof(double), cudaMemcpyDeviceToHost));
  for (size_t i = count; i < count + guard; ++i) {
    uint64_t bits;
    std::memcpy(&bits, &back[i], sizeof bits);
    EXPECT_EQ(~uint64_t(0), bits) << "element " << i << " lies past the count of " << count;
  }
  for (size_t i = 0; i < count; ++i) ASSERT_TRUE(back[i] >= -1.0 && back[i] < 1.0) << "element " << i << ": " << back[i];
}

}  // namespace
