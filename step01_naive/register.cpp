// The variants of step01, as the benchmark CLI and the ladder know them. The
// textbook i-j-p loop comes first: it is the ladder's baseline, the loop that
// step02's transpose repairs; the j-p-i order shows what loop order alone buys.
#include "naive.hpp"

namespace {
using lab::GemmCall;
LAB_REGISTER_VARIANT({"step01", "naive_ijk", LAB_IMPL_NAME, lab::Backend::cpu,
                      [](const GemmCall& c) { lab::step01::dgemm_ijk(c.alpha, c.A, c.B, c.beta, c.C); },
                      "triple loop, i-j-p order (dot products along rows of A)"});
LAB_REGISTER_VARIANT({"step01", "naive_jki", LAB_IMPL_NAME, lab::Backend::cpu,
                      [](const GemmCall& c) { lab::step01::dgemm(c.alpha, c.A, c.B, c.beta, c.C); },
                      "triple loop, j-p-i order (unit stride down columns)"});
}  // namespace
