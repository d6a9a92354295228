// Adds this build's implementation (student or solution) to the benchmark's list.
#include "bench_run.hpp"
#include "implementations.hpp"

namespace {
[[maybe_unused]] const int registered = lab::step08::register_implementation(
    {LAB_IMPL_NAME, &lab::step08::dgemm, &lab::step08::choose_grid, &lab::step08::bench::run});
}  // namespace
