// Growth of the flat buffers behind the small-collection encodings (hash and sorted-set
// listpacks). std::string doubles its capacity, which leaves a small collection built one
// element at a time with up to half its buffer unused; these grow it to the size needed, as
// Redis reallocs a listpack on every insertion (the copy is small while the collection is), and
// keep a little slack only once the buffer is large enough for copies to matter.
#pragma once

#include <cstddef>
#include <string>

namespace keywarden::packed {

inline constexpr size_t kExactGrowthLimit = 1024;

// Makes room for `extra` more bytes.
inline void reserve_more(std::string& buffer, size_t extra) {
  const size_t needed = buffer.size() + extra;
  if (needed <= buffer.capacity()) return;
  std::string grown;
  grown.reserve(needed > kExactGrowthLimit ? needed + needed / 8 : needed);
  grown.append(buffer);
  buffer.swap(grown);
}

// Drops the spare capacity of a buffer built in one go.
inline void trim(std::string& buffer) {
  if (buffer.capacity() > buffer.size() + buffer.size() / 8) buffer.shrink_to_fit();
}

}  // namespace keywarden::packed
