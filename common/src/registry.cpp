#include "lab/registry.hpp"

#include <string>

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

std::string format_tiles(const std::vector<std::string>& names, const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!out.empty()) out += ", ";
    out += (i < names.size() ? names[i] + " " : "") + std::to_string(values[i]);
  }
  return out;
}

namespace {
std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}
}  // namespace

std::string tile_error(const Variant& v, const std::vector<int64_t>& tile) {
  const TileSpec& t = v.tiles;
  if (tile.empty()) return "";
  if (t.names.empty()) return v.name + " (" + v.impl + ") takes no tiles";
  const size_t most = t.names.size(), least = t.min_given == 0 ? most : t.min_given;
  if (tile.size() >= least && tile.size() <= most) return "";
  const std::string count = least == most ? std::to_string(most)
                                          : std::to_string(least) + " to " + std::to_string(most);
  return v.name + " (" + v.impl + ") takes " + count + " number" + (most == 1 ? "" : "s") + " (" + joined(t.names) +
         "), got " + std::to_string(tile.size());
}

std::string tile_banner(const Variant& v, const Params& params) {
  const TileSpec& t = v.tiles;
  if (t.names.empty()) return "";
  std::string how = "defaults";
  if (!params.tile.empty())
    how = params.tile.size() == t.names.size() ? "--tile" : "--tile, the rest defaults";
  if (!t.used && params.tile.empty()) return "tiles " + joined(t.names) + " (its defaults)";
  const std::string used = t.used ? t.used(params) : format_tiles(t.names, params.tile);
  return "tiles " + used + " (" + how + ")";
}

}  // namespace lab
