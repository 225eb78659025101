// Key slots as Redis Cluster computes them: the CRC-16/XMODEM check value, slots that
// redis-cli's CLUSTER KEYSLOT reports, and the hash-tag rule's edge cases.
#include "common/key_slot.h"

#include <gtest/gtest.h>

namespace keywarden {
namespace {

TEST(KeySlotTest, Crc16IsXmodem) {
  EXPECT_EQ(crc16(""), 0);
  EXPECT_EQ(crc16("123456789"), 0x31C3);
}

TEST(KeySlotTest, SlotsMatchRedisCluster) {
  // Values from CLUSTER KEYSLOT on a Redis Cluster node.
  EXPECT_EQ(key_slot("foo"), 12182);
  EXPECT_EQ(key_slot("bar"), 5061);
  EXPECT_EQ(key_slot("hello"), 866);
  EXPECT_EQ(key_slot("somekey"), 11058);
}

TEST(KeySlotTest, HashTags) {
  EXPECT_EQ(hash_tag_part("{user1000}.following"), "user1000");
  EXPECT_EQ(key_slot("{user1000}.following"), key_slot("{user1000}.followers"));
  EXPECT_EQ(hash_tag_part("foo{}{bar}"), "foo{}{bar}");   // empty first tag: the whole key
  EXPECT_EQ(hash_tag_part("foo{{bar}}zap"), "{bar");      // up to the first '}'
  EXPECT_EQ(hash_tag_part("foo{bar}{zap}"), "bar");       // only the first tag counts
  EXPECT_EQ(hash_tag_part("foo{bar"), "foo{bar");          // unclosed: the whole key
  EXPECT_EQ(hash_tag_part("}{x}"), "x");
  // The same keys' slots, from CLUSTER KEYSLOT.
  EXPECT_EQ(key_slot("{user1000}.following"), 3443);
  EXPECT_EQ(key_slot("foo{}{bar}"), 8363);
  EXPECT_EQ(key_slot("foo{{bar}}zap"), 4015);
  EXPECT_EQ(key_slot("}{x}"), 16287);
}

}  // namespace
}  // namespace keywarden
