#include <gtest/gtest.h>

#include <string>

#include "common/crc64.h"
#include "common/lzf.h"

namespace keywarden {
namespace {

TEST(Crc64, RedisCheckValue) {
  // Redis's crc64 self-test value for "123456789".
  EXPECT_EQ(crc64(0, "123456789"), 0xe9c6d914c4b8d9caULL);
  EXPECT_EQ(crc64(0, ""), 0u);
  EXPECT_EQ(crc64(crc64(0, "1234"), "56789"), crc64(0, "123456789"));
}

TEST(Lzf, LiteralsAndBackReferences) {
  std::string out;
  // A literal run "abc", then a match of 3+2... here length 1+2 = 3 bytes from distance 3.
  const std::string stream = std::string("\x02" "abc", 4) + std::string("\x20\x02", 2);
  ASSERT_TRUE(lzf_decompress(stream, 6, &out));
  EXPECT_EQ(out, "abcabc");
  // An overlapping match repeats the last byte: literal "a", then 7+2 bytes from distance 1.
  const std::string run = std::string("\x00" "a", 2) + std::string("\xe0\x00\x00", 3);
  ASSERT_TRUE(lzf_decompress(run, 10, &out));
  EXPECT_EQ(out, std::string(10, 'a'));
}

TEST(Lzf, MalformedStreamsAreRefused) {
  std::string out;
  EXPECT_FALSE(lzf_decompress(std::string("\x05" "ab", 3), 6, &out));       // literal cut short
  EXPECT_FALSE(lzf_decompress(std::string("\x20\x05", 2), 3, &out));        // reference before start
  EXPECT_FALSE(lzf_decompress(std::string("\x02" "abc", 4), 2, &out));      // longer than announced
  EXPECT_FALSE(lzf_decompress(std::string("\x02" "abc", 4), 5, &out));      // shorter than announced
}

TEST(Lzf, CompressedTextRoundTrips) {
  std::string text;
  for (int i = 0; text.size() < 20000; ++i) text += "session:" + std::to_string(i % 97) + " ";
  for (size_t size : {size_t{21}, size_t{100}, size_t{4096}, text.size()}) {
    const std::string input = text.substr(0, size);
    std::string compressed, restored;
    ASSERT_TRUE(lzf_compress(input, input.size(), &compressed)) << size;
    EXPECT_LT(compressed.size(), input.size());
    ASSERT_TRUE(lzf_decompress(compressed, input.size(), &restored)) << size;
    EXPECT_EQ(restored, input);
    // One byte short of the real length is a malformed stream for that length.
    EXPECT_FALSE(lzf_decompress(compressed, input.size() - 1, &restored));
  }
}

TEST(Lzf, CompressionThatSavesNothingIsRefused) {
  std::string noise;
  uint32_t state = 12345;
  for (int i = 0; i < 1000; ++i) {
    state = state * 1103515245 + 12345;
    noise.push_back(static_cast<char>(state >> 16));
  }
  std::string out;
  EXPECT_FALSE(lzf_compress(noise, noise.size() - 4, &out));
  EXPECT_FALSE(lzf_compress("", 10, &out));
}

}  // namespace
}  // namespace keywarden
