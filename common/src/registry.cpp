#include "lab/registry.hpp"

namespace lab {
namespace {
// A function-local static: registration from other translation units' static
// initializers may run before this file's globals would be constructed.
std::vector<Variant>& list() {
  static std::vector<Variant> variants;
  return variants;
}
}  // namespace

int register_variant(Variant v) {
  list().push_back(std::move(v));
  return static_cast<int>(list().size()) - 1;
}

const std::vector<Variant>& registered_variants() { return list(); }

}  // namespace lab
