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

}  // namespace
}  // namespace keywarden
