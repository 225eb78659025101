#include "common/sha1.h"

#include <gtest/gtest.h>

#include <string>

namespace keywarden {
namespace {

TEST(Sha1, KnownDigests) {
  EXPECT_EQ(sha1_hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  // Redis's SCRIPT LOAD "return 1".
  EXPECT_EQ(sha1_hex("return 1"), "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
  EXPECT_EQ(sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(sha1_hex(std::string(1000000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

TEST(Sha1, LengthsAroundTheBlockBoundary) {
  // 55, 56 and 64 bytes put the length in the first or a second final block.
  EXPECT_EQ(sha1_hex(std::string(56, 'x')), "901305367c259952f4e7af8323f480d59f81335b");
  EXPECT_EQ(sha1_hex(std::string(64, 'a')), "0098ba824b5c16427bd7a1122a5a442a25ec644d");
}

}  // namespace
}  // namespace keywarden
