#include "text.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

namespace lab::step09::apsp {

std::optional<int64_t> parse_integer(std::string_view t) {
  int64_t v = 0;
  const char* end = t.data() + t.size();
  // from_chars takes no leading '+'; accept it as people write it.
  const char* begin = !t.empty() && t[0] == '+' && t.size() > 1 && t[1] != '-' ? t.data() + 1 : t.data();
  const auto r = std::from_chars(begin, end, v);
  if (r.ec != std::errc() || r.ptr != end || t.empty()) return std::nullopt;
  return v;
}

std::string parse_real(std::string_view t, double& value, const char* what, bool allow_inf) {
  const std::string shown = std::string(what) + " " + quote(t);
  if (t.empty()) return std::string("an empty ") + what;
  if (allow_inf && (t == "inf" || t == "+inf")) {
    value = std::numeric_limits<double>::infinity();
    return {};
  }
  const char* end = t.data() + t.size();
  const char* begin = t[0] == '+' && t.size() > 1 && t[1] != '-' ? t.data() + 1 : t.data();
  double v = 0;
  const auto r = std::from_chars(begin, end, v);
  if (r.ec == std::errc::result_out_of_range) return shown + " is out of the range of double";
  if (r.ec != std::errc() || r.ptr != end) return shown + " is not a number";
  if (!std::isfinite(v)) return shown + " is not a finite number";
  value = v + 0.0;  // -0 becomes +0, so that it prints as "0"
  return {};
}

std::string format_number(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string quote(std::string_view token) {
  constexpr size_t kShown = 24;
  std::string s = "'";
  for (size_t i = 0; i < token.size() && i < kShown; ++i) {
    const auto c = static_cast<unsigned char>(token[i]);
    s += c < 0x20 || c == 0x7f ? '?' : char(c);
  }
  return s + (token.size() > kShown ? "...'" : "'");
}

std::vector<std::string_view> split_words(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) words.push_back(line.substr(i, j - i));
    i = j;
  }
  return words;
}

}  // namespace lab::step09::apsp
