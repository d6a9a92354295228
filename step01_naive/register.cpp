// The variants of step01, as the benchmark CLI and the ladder know them.
#include "naive.hpp"

namespace {
using lab::GemmCall;
LAB_REGISTER_VARIANT({"step01", "naive", LAB_IMPL_NAME, lab::Backend::cpu,
                      [](const GemmCall& c) { lab::step01::dgemm(c.alpha, c.A, c.B, c.beta, c.C); },
                      "triple loop, j-p-i order (unit stride down columns)"});
LAB_REGISTER_VARIANT({"step01", "naive_ijk", LAB_IMPL_NAME, lab::Backend::cpu,
                      [](const GemmCall& c) { lab::step01::dgemm_ijk(c.alpha, c.A, c.B, c.beta, c.C); },
                      "triple loop, i-j-p order (dot products along rows of A)"});
}  // namespace
