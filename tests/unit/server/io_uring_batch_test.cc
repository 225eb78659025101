// UringBatch alone, on socket pairs: every operation of a list is reported exactly once with
// what the plain call would have returned (a byte count, -EAGAIN on a socket with nothing to
// read or no room to write, -errno on a broken one), lists longer than the ring included, and
// nothing ever waits for a socket.
#include "server/io_uring_batch.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

namespace keywarden {
namespace {

struct SocketPair {
  int ends[2] = {-1, -1};
  SocketPair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, ends), 0); }
  ~SocketPair() {
    for (int fd : ends) {
      if (fd >= 0) close(fd);
    }
  }
};

std::unique_ptr<UringBatch> make_ring(unsigned entries = 8) {
  std::string reason;
  auto ring = UringBatch::create(entries, &reason);
  EXPECT_NE(ring, nullptr) << reason;
  return ring;
}

TEST(UringBatchTest, RecvAndSendReportWhatThePlainCallsWould) {
  auto ring = make_ring();
  if (ring == nullptr) GTEST_SKIP() << "no io_uring here";
  std::vector<SocketPair> pairs(20);  // more than the ring's 8 entries: several system calls
  for (size_t index = 0; index < pairs.size(); index += 2) {  // data on every other pair
    const std::string text = "hello " + std::to_string(index);
    ASSERT_EQ(write(pairs[index].ends[1], text.data(), text.size()),
              static_cast<ssize_t>(text.size()));
  }
  std::vector<std::string> buffers(pairs.size(), std::string(64, '\0'));
  std::vector<int> results(pairs.size(), 12345), reports(pairs.size(), 0);
  auto prepare = [&](size_t index, UringBatch::Operation& operation) {
    operation = {UringBatch::Kind::kRecv, pairs[index].ends[0], buffers[index].data(),
                 buffers[index].size()};
  };
  auto complete = [&](size_t index, int result) {
    results[index] = result;
    ++reports[index];
  };
  ring->for_each(pairs.size(), prepare, complete);
  for (size_t index = 0; index < pairs.size(); ++index) {
    ASSERT_EQ(reports[index], 1);
    if (index % 2 == 0) {
      const std::string text = "hello " + std::to_string(index);
      ASSERT_EQ(results[index], static_cast<int>(text.size()));
      EXPECT_EQ(buffers[index].substr(0, text.size()), text);
    } else {
      EXPECT_EQ(results[index], -EAGAIN);  // nothing to read: no wait
    }
  }

  // Sends: the whole of a small one, part or -EAGAIN once the peer's buffer is full.
  std::string big(4 << 20, 'x');
  std::vector<int> sent(2, 0);
  auto prepare_send = [&](size_t index, UringBatch::Operation& operation) {
    operation = {UringBatch::Kind::kSend, pairs[index].ends[0], big.data(),
                 index == 0 ? size_t{5} : big.size()};
  };
  auto complete_send = [&](size_t index, int result) { sent[index] = result; };
  ring->for_each(2, prepare_send, complete_send);
  EXPECT_EQ(sent[0], 5);
  EXPECT_GT(sent[1], 0);
  EXPECT_LT(sent[1], static_cast<int>(big.size()));
  ring->for_each(2, prepare_send, complete_send);
  EXPECT_EQ(sent[1], -EAGAIN);  // still full: no wait either
}

TEST(UringBatchTest, BrokenSocketsReportTheirErrno) {
  auto ring = make_ring();
  if (ring == nullptr) GTEST_SKIP() << "no io_uring here";
  SocketPair pair;
  close(pair.ends[1]);
  pair.ends[1] = -1;
  char byte = 'x';
  int results[2] = {0, 0};
  auto prepare = [&](size_t index, UringBatch::Operation& operation) {
    operation = {index == 0 ? UringBatch::Kind::kRecv : UringBatch::Kind::kSend, pair.ends[0],
                 &byte, 1};
  };
  auto complete = [&](size_t index, int result) { results[index] = result; };
  ring->for_each(2, prepare, complete);
  EXPECT_EQ(results[0], 0);       // the end of the stream
  EXPECT_EQ(results[1], -EPIPE);  // no SIGPIPE: the test would have died
}

TEST(UringBatchTest, AnEmptyListMakesNoCall) {
  auto ring = make_ring();
  if (ring == nullptr) GTEST_SKIP() << "no io_uring here";
  auto prepare = [](size_t, UringBatch::Operation&) { FAIL(); };
  auto complete = [](size_t, int) { FAIL(); };
  ring->for_each(0, prepare, complete);
}

}  // namespace
}  // namespace keywarden
