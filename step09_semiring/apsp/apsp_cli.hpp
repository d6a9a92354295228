// apsp_cli.hpp — the `apsp` command: all-pairs shortest paths on real graph files.
//
//   step09_semiring apsp --graph FILE [options]       (see its --help)
//
// It runs on the min-plus GEMMs registered with apsp::register_gemms
// (minplus_gemm.hpp). Exit status: 0 ok, 1 a result failed --check/--expect,
// 2 bad usage or input (a malformed graph, a negative cycle), 4 runtime error,
// 77 --backend gpu where there is no GPU engine (skipped).
#pragma once

#include "minplus_gemm.hpp"

namespace lab::step09 {

/// argv[1..] are the options; `program` is the command as the user types it
/// ("step09_semiring apsp"), named in the usage text and its errors. Runs on
/// apsp::registered_gemms().
int apsp_main(int argc, char** argv, const char* program);

namespace apsp {
/// The same on the given GEMMs (tests pass the reference ones).
int apsp_main_with(int argc, char** argv, const MinPlusGemms& gemms, const char* program = "apsp");
}  // namespace apsp

}  // namespace lab::step09
