// lab/first_exception.hpp — carrying an exception out of an OpenMP parallel region.
//
// An exception must not leave a parallel region: the program would terminate.
// Code that may throw inside one (a LAB_TODO the student has not done yet, a
// failed allocation) runs through FirstException::run, which keeps the first
// exception; the caller rethrows it once the region has ended.
#pragma once

#include <exception>

namespace lab {

class FirstException {
 public:
  template <class F>
  void run(F&& f) noexcept {
    try {
      f();
    } catch (...) {
#pragma omp critical(lab_first_exception)
      if (!error_) error_ = std::current_exception();
    }
  }
  /// Call after the parallel region: throws the kept exception, if any.
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::exception_ptr error_;
};

}  // namespace lab
