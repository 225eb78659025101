// The replication backlog: offsets, wrap-around, overrun and resizing.
#include "replication/backlog.h"

#include <gtest/gtest.h>

#include <string>

namespace keywarden {
namespace {

std::string from(const ReplicationBacklog& backlog, int64_t offset) {
  std::string out;
  backlog.copy_from(offset, out);
  return out;
}

TEST(ReplicationBacklog, StartsEmptyAtTheNextOffset) {
  ReplicationBacklog backlog(16, 101);
  EXPECT_EQ(backlog.history_length(), 0);
  EXPECT_EQ(backlog.first_offset(), 101);
  EXPECT_TRUE(backlog.can_continue_from(101));
  EXPECT_FALSE(backlog.can_continue_from(100));
  EXPECT_FALSE(backlog.can_continue_from(102));
  EXPECT_EQ(from(backlog, 101), "");
}

TEST(ReplicationBacklog, KeepsTheNewestBytesAcrossWrapAround) {
  ReplicationBacklog backlog(8, 1);
  backlog.append("abcde");
  EXPECT_EQ(backlog.first_offset(), 1);
  EXPECT_EQ(backlog.history_length(), 5);
  EXPECT_EQ(from(backlog, 3), "cde");
  backlog.append("fghij");  // wraps: holds "cdefghij"
  EXPECT_EQ(backlog.history_length(), 8);
  EXPECT_EQ(backlog.first_offset(), 3);
  EXPECT_EQ(backlog.next_offset(), 11);
  EXPECT_FALSE(backlog.can_continue_from(2));
  EXPECT_EQ(from(backlog, 3), "cdefghij");
  EXPECT_EQ(from(backlog, 9), "ij");
  EXPECT_EQ(from(backlog, 11), "");
  for (int i = 0; i < 13; ++i) backlog.append(std::string(1, static_cast<char>('k' + i)));
  EXPECT_EQ(from(backlog, backlog.first_offset()), "pqrstuvw");
}

TEST(ReplicationBacklog, AnAppendLargerThanTheCapacityKeepsItsTail) {
  ReplicationBacklog backlog(4, 1);
  backlog.append("xy");
  backlog.append("0123456789");
  EXPECT_EQ(backlog.history_length(), 4);
  EXPECT_EQ(backlog.first_offset(), 9);
  EXPECT_EQ(from(backlog, 9), "6789");
  backlog.append("ab");
  EXPECT_EQ(from(backlog, 11), "89ab");
}

TEST(ReplicationBacklog, ResizeKeepsWhatFits) {
  ReplicationBacklog backlog(8, 1);
  backlog.append("abcdefghijk");  // holds "defghijk"
  backlog.resize(4);
  EXPECT_EQ(backlog.capacity(), 4);
  EXPECT_EQ(from(backlog, backlog.first_offset()), "hijk");
  EXPECT_EQ(backlog.first_offset(), 8);
  backlog.resize(10);
  EXPECT_EQ(from(backlog, 8), "hijk");
  backlog.append("lmnopq");
  EXPECT_EQ(from(backlog, 8), "hijklmnopq");
  backlog.append("r");
  EXPECT_EQ(from(backlog, 9), "ijklmnopqr");
}

TEST(ReplicationBacklog, ResetStartsANewHistory) {
  ReplicationBacklog backlog(8, 1);
  backlog.append("abc");
  backlog.reset(501);
  EXPECT_EQ(backlog.history_length(), 0);
  EXPECT_EQ(backlog.first_offset(), 501);
  backlog.append("z");
  EXPECT_EQ(from(backlog, 501), "z");
}

}  // namespace
}  // namespace keywarden
