// ASCII helpers for protocol keywords, which Redis compares without regard to case.
#pragma once

#include <cctype>
#include <string_view>

namespace keywarden {

// ASCII case-insensitive equality, for keywords ("nx" == "NX").
inline bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace keywarden
