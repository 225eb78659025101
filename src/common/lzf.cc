// The LZF codec itself is Debian's liblzf (the implementation Redis embeds). It replaced our
// own in round two: bench/codec_bench.cc measured liblzf 2.9x faster compressing 16 KiB of
// text and 2.3x faster decompressing 100-byte values, at the same ratio; ours decompressed
// 16 KiB 1.35x faster, but short values are most of what an RDB load decompresses
// (docs/benchmarks.md, "LZF and SHA-1"). What stays here is the adaptation to std::string and
// the checks that make a hostile length harmless before anything is allocated.
#include "common/lzf.h"

#include <lzf.h>

#include <algorithm>
#include <climits>

namespace keywarden {

namespace {
constexpr size_t kLzfMaxExpansion = 88;  // 264 bytes out of 3 in
}  // namespace

bool lzf_decompress(std::string_view input, size_t expected_length, std::string* output) {
  output->clear();
  // No chunk expands more than a back reference of three bytes into 264: a length beyond
  // that ratio is a lie, refused before anything is reserved for it. liblzf counts in
  // unsigned int, as Redis's copy does.
  if (expected_length / kLzfMaxExpansion > input.size()) return false;
  if (input.size() > UINT_MAX || expected_length > UINT_MAX) return false;
  if (expected_length == 0) return input.empty();
  output->resize(expected_length);
  // liblzf is built with CHECK_INPUT: a truncated chunk or a reference before the start of
  // the output makes it return 0 (EINVAL), an output longer than expected too (E2BIG).
  const unsigned produced =
      ::lzf_decompress(input.data(), static_cast<unsigned>(input.size()), output->data(),
                       static_cast<unsigned>(expected_length));
  if (produced != expected_length) {
    output->clear();
    return false;
  }
  return true;
}

bool lzf_compress(std::string_view input, size_t max_output, std::string* output) {
  output->clear();
  if (input.empty() || max_output == 0 || input.size() > UINT_MAX) return false;
  const size_t capacity = std::min({max_output, input.size() + input.size() / 16 + 64,
                                    static_cast<size_t>(UINT_MAX)});
  output->resize(capacity);
  const unsigned written = ::lzf_compress(input.data(), static_cast<unsigned>(input.size()),
                                          output->data(), static_cast<unsigned>(capacity));
  output->resize(written);  // 0: it did not fit in max_output
  return written != 0;
}

}  // namespace keywarden
