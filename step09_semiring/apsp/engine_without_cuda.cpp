// The GPU engine's entry points in a build without CUDA: it says so.
#include <stdexcept>

#include "engine.hpp"

namespace lab::step09::apsp {

bool gpu_engine_available(std::string* why) {
  if (why) *why = "this program was built without CUDA (no GPU engine)";
  return false;
}

std::unique_ptr<Engine> make_gpu_engine(Matrix, DeviceMinPlusGemm, const std::string&) {
  throw std::runtime_error("this program was built without CUDA (no GPU engine)");
}

}  // namespace lab::step09::apsp
