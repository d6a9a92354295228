// step09_semiring apsp — the all-pairs shortest-paths tool's entry point.
//
// `step09_semiring apsp ...` (main.cpp) calls apsp_main with the arguments
// from "apsp" on: argv[0] is "apsp", the tool's options follow. It returns
// the process's exit status.
#pragma once

namespace lab::step09 {

int apsp_main(int argc, char** argv);

}  // namespace lab::step09
