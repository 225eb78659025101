// Hashing for unordered containers keyed by std::string that are looked up by
// std::string_view: with `std::equal_to<>` as the key-equal, find() takes a view without
// building a string (a lookup on every publish, every write a tracked client may cache).
#pragma once
#include <cstddef>
#include <functional>
#include <string_view>

namespace keywarden {

struct TransparentStringHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

}  // namespace keywarden
