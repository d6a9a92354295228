// implementations.hpp — the step08 implementations built into the executable.
//
// lab's variant registry (lab/registry.hpp) holds host calls on one process; the
// dgemm of this step is collective and takes Options, so the benchmark finds it
// here instead. register.cpp is compiled once per implementation (student,
// solution) and adds that implementation's functions: the only list there is.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "mpi3d.hpp"

namespace lab::step08 {

struct Implementation {
  std::string name;  ///< "student" or "solution"
  void (*gemm)(MPI_Comm, double, ConstMatView, ConstMatView, double, MatView, const Options&);
  Grid (*choose_grid)(int, int64_t, int64_t, int64_t);
};

inline std::vector<Implementation>& implementations() {
  static std::vector<Implementation> list;
  return list;
}

inline int register_implementation(Implementation impl) {
  implementations().push_back(std::move(impl));
  return static_cast<int>(implementations().size());
}

}  // namespace lab::step08
