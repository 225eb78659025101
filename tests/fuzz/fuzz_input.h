// Helpers shared by the fuzz targets: a reader that draws small decisions (bytes, small
// integers, lengths) from the front of a fuzz input and hands the rest over as raw bytes, and
// a deterministic pseudo-random sequence for choices that must not depend on the data itself
// (so that mutating the data does not also reshuffle, say, where a buffer is split).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string_view>

namespace keywarden::fuzzing {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : bytes_(reinterpret_cast<const char*>(data), size) {}

  bool empty() const { return bytes_.empty(); }
  size_t remaining() const { return bytes_.size(); }
  // One byte, 0 once the input is exhausted.
  uint8_t byte() {
    if (bytes_.empty()) return 0;
    const auto value = static_cast<uint8_t>(bytes_.front());
    bytes_.remove_prefix(1);
    return value;
  }
  // A value in [0, bound), bound > 0.
  size_t below(size_t bound) { return byte() % bound; }
  // Up to `max_length` bytes, the length given by the next byte.
  std::string_view bytes(size_t max_length) {
    const size_t length = std::min<size_t>(below(max_length + 1), bytes_.size());
    std::string_view taken = bytes_.substr(0, length);
    bytes_.remove_prefix(length);
    return taken;
  }
  // Everything left.
  std::string_view rest() {
    std::string_view taken = bytes_;
    bytes_ = {};
    return taken;
  }

 private:
  std::string_view bytes_;
};

// xorshift: reproducible choices from a seed taken from the input.
class Choices {
 public:
  explicit Choices(uint32_t seed) : state_(seed * 2654435761u + 1) {}
  uint32_t next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 17;
    state_ ^= state_ << 5;
    return state_;
  }
  size_t below(size_t bound) { return next() % bound; }

 private:
  uint32_t state_;
};

// Stops the process with a message when an invariant checked by a target fails, so that the
// fuzzer reports the input like any other crash.
[[noreturn]] inline void invariant_failed(const char* what) {
  std::fprintf(stderr, "fuzz invariant failed: %s\n", what);
  __builtin_trap();
}

}  // namespace keywarden::fuzzing
