// The variants of step02, as the benchmark CLI and the ladder know them.
#include "transpose.hpp"

namespace {
using lab::GemmCall;
LAB_REGISTER_VARIANT({"step02", "transpose", LAB_IMPL_NAME, lab::Backend::cpu,
                      [](const GemmCall& c) { lab::step02::dgemm(c.alpha, c.A, c.B, c.beta, c.C); },
                      "alpha*A transposed into a buffer; each C(i,j) a unit-stride dot product"});
}  // namespace
