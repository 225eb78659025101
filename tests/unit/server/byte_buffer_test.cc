// ByteBuffer, the connection's query buffer: growth for what a read needs, lazy dropping of the
// consumed front, and the two ways it gives memory back (emptied after a big argument; resized
// by the cron, down to the bytes still in use).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <string_view>

#include "server/connection.h"

namespace keywarden {
namespace {

void append(ByteBuffer& buffer, std::string_view bytes) {
  std::memcpy(buffer.prepare(bytes.size()), bytes.data(), bytes.size());
  buffer.commit(bytes.size());
}

std::string contents(ByteBuffer& buffer) { return std::string(buffer.data(), buffer.size()); }

TEST(ByteBuffer, GrowsToWhatIsAskedAndKeepsUnconsumedBytes) {
  ByteBuffer buffer;
  EXPECT_EQ(buffer.capacity(), 0u);
  append(buffer, "*1\r\n$4\r\nPING\r\n*1\r\n$4");
  buffer.consume(14);
  EXPECT_EQ(contents(buffer), "*1\r\n$4");
  // A big argument announced by its header is read into room made for it at once.
  buffer.prepare(1 << 20);
  EXPECT_GE(buffer.capacity(), (1u << 20) + 6);
  EXPECT_EQ(contents(buffer), "*1\r\n$4");
}

TEST(ByteBuffer, ShrinkToKeepsTheDataAndNeverGrows) {
  ByteBuffer buffer;
  buffer.prepare(64 * 1024);
  append(buffer, "0123456789");
  buffer.consume(4);
  buffer.shrink_to(1024);
  EXPECT_EQ(buffer.capacity(), 1024u);
  EXPECT_EQ(contents(buffer), "456789");
  buffer.shrink_to(0);  // not below the bytes in use
  EXPECT_EQ(buffer.capacity(), 6u);
  EXPECT_EQ(contents(buffer), "456789");
  buffer.shrink_to(4096);  // a bigger target leaves it alone
  EXPECT_EQ(buffer.capacity(), 6u);
  append(buffer, "ab");  // and it grows again when written to
  EXPECT_EQ(contents(buffer), "456789ab");
  buffer.consume(8);
  buffer.shrink_to(0);
  EXPECT_EQ(buffer.capacity(), 0u);
  EXPECT_TRUE(buffer.empty());
  append(buffer, "x");
  EXPECT_EQ(contents(buffer), "x");
}

TEST(ByteBuffer, ShrinkIfIdleReleasesOnlyAnEmptyBigBuffer) {
  ByteBuffer buffer;
  buffer.prepare(1 << 20);
  append(buffer, "abc");
  buffer.shrink_if_idle(32 * 1024);
  EXPECT_GE(buffer.capacity(), 1u << 20);  // still holds bytes
  buffer.consume(3);
  buffer.shrink_if_idle(32 * 1024);
  EXPECT_EQ(buffer.capacity(), 0u);
}


TEST(ByteBuffer, TruncateKeepsTheFrontOfTheData) {
  ByteBuffer buffer;
  append(buffer, "*1\r\n$4\r\nPING\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$40000\r\nabc");
  buffer.consume(14);
  // A big bulk's first bytes move to a block of their own: the command ends at the cut.
  buffer.truncate(buffer.size() - 3);
  EXPECT_EQ(contents(buffer), "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$40000\r\n");
  append(buffer, "$2\r\nEX");
  EXPECT_EQ(contents(buffer), "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$40000\r\n$2\r\nEX");
}

}  // namespace
}  // namespace keywarden
