// text.hpp — strict number parsing and exact number printing, shared by the
// graph reader, the distance files and the command line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lab::step09::apsp {

/// The whole token as a base-10 integer, or nothing ("12x", "1.5", "" and
/// values beyond int64 are nothing).
std::optional<int64_t> parse_integer(std::string_view token);

/// Why a token is not a usable number, or empty when `value` holds it: the
/// token must be a whole decimal number (12, -3, 0.25, 1e3) within the range
/// of double, finite (no nan; "inf" only where `allow_inf`). `what` names it
/// in the message ("weight '1x' is not a number"). -0 reads as +0.
std::string parse_real(std::string_view token, double& value, const char* what, bool allow_inf = false);

/// The shortest text that reads back as exactly `v` ("3", "0.1", "inf").
std::string format_number(double v);

/// 'token' for a message: at most 24 characters shown, control bytes as '?',
/// so that a binary file read as text still gives a one-line message.
std::string quote(std::string_view token);

/// Splits at spaces and tabs (a trailing '\r' of a CRLF file is dropped).
std::vector<std::string_view> split_words(std::string_view line);

}  // namespace lab::step09::apsp
