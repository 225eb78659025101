// Connection alone, without a Server: a FakeHost implements ConnectionHost around a bare
// ServerState and Dispatcher (the data families, a manual clock) and a real EventLoop, and
// records what the connection reports to it. Each test writes requests into one end of a
// socketpair, drives the other end's Connection as the loop would (on_events for a read, the
// host's flush before sleeping) and reads the reply bytes back, so framing, pipelining,
// protocol errors, limits and the host's counters are checked byte for byte, deterministically
// (both ends are non-blocking: "nothing sent" is a read that would block, never a wait).
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "commands/dispatcher.h"
#include "commands/families.h"
#include "commands/server_state.h"
#include "common/clock.h"
#include "server/connection.h"
#include "server/connection_host.h"
#include "common/event_loop.h"
#include "server/io_threads.h"

namespace keywarden {
namespace {

class FakeHost final : public ConnectionHost {
 public:
  FakeHost() : state_(clock, 16), dispatcher_(state_) {
    register_data_commands(state_.commands());
  }

  ServerState& state() override { return state_; }
  Dispatcher& dispatcher() override { return dispatcher_; }
  EventLoop& loop() override { return loop_; }
  const ClientLimits& client_limits() const override { return limits; }
  TrafficStats& traffic() override { return traffic_; }
  bool script_running_for(const ClientSession&) const override { return false; }

  void queue_write(Connection* connection) override {
    if (connection->pending_write) return;
    connection->pending_write = true;
    write_queue_.push_back(connection);
  }
  void before_replies() override { ++before_replies_calls; }

  struct Ran {
    uint64_t client;
    std::string command;  // full name, "client|list" style
    std::vector<std::string> args;
  };
  void command_ran(Connection& connection, std::span<const std::string_view> args,
                   const Command& command, int64_t) override {
    ran.push_back({connection.id(), command.full_name, {args.begin(), args.end()}});
  }
  // As the server does: each client whose key became ready runs its command again.
  void serve_blocked_clients() override {
    dispatcher_.serve_ready_keys([this](ClientSession& waiter) {
      auto it = connections_.find(waiter.id);
      if (it != connections_.end()) it->second->retry_blocked();
    });
  }

  void client_memory_changed(Connection& connection) override {
    ++memory_changes;
    connection.reported_memory = connection.memory_usage();
  }
  void resume_later(Connection* connection) override { resumes_.push_back(connection->id()); }
  void pause_hold_changed(int delta) override { pause_holds += delta; }
  void connection_closed(Connection* connection) override {
    ++closed[connection->id()];
    connection->reported_memory = 0;
    connections_.erase(connection->id());
  }

  void add(Connection* connection) { connections_[connection->id()] = connection; }
  // What the server does before the loop sleeps: runs the clients to resume, then flushes
  // every connection that queued a write, in order.
  void before_sleep() {
    std::vector<uint64_t> ids;
    ids.swap(resumes_);
    for (uint64_t id : ids) {
      auto it = connections_.find(id);
      if (it != connections_.end()) it->second->resume();
    }
    flush();
  }
  void flush() {
    for (size_t i = 0; i < write_queue_.size(); ++i) {
      Connection* connection = write_queue_[i];
      connection->pending_write = false;
      connection->flush();
    }
    write_queue_.clear();
  }
  size_t queued_writes() const { return write_queue_.size(); }
  // The names of the commands that ran, in order.
  std::vector<std::string> ran_names() const {
    std::vector<std::string> names;
    for (const Ran& command : ran) names.push_back(command.command);
    return names;
  }

  ManualClock clock;
  ClientLimits limits;
  std::vector<Ran> ran;
  int before_replies_calls = 0;
  int memory_changes = 0;
  int pause_holds = 0;
  std::map<uint64_t, int> closed;  // connection_closed calls, by client id
  TrafficStats traffic_;

 private:
  ServerState state_;
  Dispatcher dispatcher_;
  EventLoop loop_;
  std::vector<Connection*> write_queue_;
  std::vector<uint64_t> resumes_;
  std::map<uint64_t, Connection*> connections_;
};

void set_nonblocking(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  ASSERT_GE(flags, 0);
  ASSERT_EQ(fcntl(fd, F_SETFL, flags | O_NONBLOCK), 0);
}

// One client: the test's end of the socketpair and the Connection on the other end.
struct Peer {
  int fd = -1;
  std::unique_ptr<Connection> connection;
  ~Peer() {
    if (fd >= 0) ::close(fd);
  }
};

class ConnectionTest : public ::testing::Test {
 protected:
  Peer& open() {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    set_nonblocking(fds[0]);
    set_nonblocking(fds[1]);
    auto peer = std::make_unique<Peer>();
    peer->fd = fds[1];
    const uint64_t id = peers_.size() + 1;
    peer->connection =
        std::make_unique<Connection>(host, fds[0], id, "127.0.0.1:50000", "127.0.0.1:6379", false);
    host.add(peer->connection.get());
    peers_.push_back(std::move(peer));
    return *peers_.back();
  }

  // The client sends `bytes` (all of them: they fit in the socket buffer).
  static void send(Peer& peer, std::string_view bytes) {
    ASSERT_EQ(::write(peer.fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  // The loop reports the connection readable: one read, and the commands it completed run.
  static void readable(Peer& peer) { peer.connection->on_events(EventLoop::kReadable); }
  // One read by the client: what has arrived, "" when nothing has (the read would block),
  // "<eof>" when the connection is closed and nothing is left.
  static std::string receive(Peer& peer) {
    char buffer[64 * 1024];
    const ssize_t count = ::read(peer.fd, buffer, sizeof(buffer));
    if (count == 0) return "<eof>";
    if (count < 0) {
      EXPECT_TRUE(errno == EAGAIN || errno == EWOULDBLOCK) << "read: " << errno;
      return "";
    }
    return std::string(buffer, static_cast<size_t>(count));
  }
  // Sends, drives one read and the flush before sleeping, and returns one read of the reply.
  std::string round_trip(Peer& peer, std::string_view bytes) {
    send(peer, bytes);
    readable(peer);
    host.before_sleep();
    return receive(peer);
  }

  // Declared first so that it outlives the connections (which report their close to it).
  FakeHost host;
  std::vector<std::unique_ptr<Peer>> peers_;
};

TEST_F(ConnectionTest, PipelinedBatchIsAnsweredInOrderInOneWrite) {
  Peer& peer = open();
  const std::string batch =
      "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
      "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"
      "*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n"
      "*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n"
      "*1\r\n$4\r\nPING\r\n";
  send(peer, batch);
  readable(peer);
  // Nothing leaves before the host flushes, and the connection asked for one flush.
  EXPECT_EQ(receive(peer), "");
  EXPECT_EQ(host.queued_writes(), 1u);
  host.before_sleep();
  const std::string replies = "+OK\r\n$1\r\nv\r\n:1\r\n$2\r\nhi\r\n+PONG\r\n";
  EXPECT_EQ(receive(peer), replies);
  EXPECT_EQ(receive(peer), "");

  EXPECT_EQ(host.ran_names(), (std::vector<std::string>{"set", "get", "incr", "echo", "ping"}));
  EXPECT_EQ(host.ran[0].args, (std::vector<std::string>{"SET", "k", "v"}));
  EXPECT_EQ(host.ran[0].client, peer.connection->id());
  EXPECT_EQ(peer.connection->commands_processed(), 5u);

  EXPECT_EQ(host.traffic_.reads_processed, 1u);
  EXPECT_EQ(host.traffic_.net_input_bytes, batch.size());
  EXPECT_EQ(host.traffic_.writes_processed, 1u);
  EXPECT_EQ(host.traffic_.net_output_bytes, replies.size());
  EXPECT_GE(host.before_replies_calls, 1);
  EXPECT_GE(host.memory_changes, 1);
  EXPECT_EQ(peer.connection->reported_memory, peer.connection->memory_usage());
  EXPECT_FALSE(peer.connection->closed());
}

TEST_F(ConnectionTest, MoreThanOneParseBatchOfCommandsStillRunsInOrder) {
  // More commands than the connection parses ahead at once.
  Peer& peer = open();
  std::string batch, replies;
  for (int i = 1; i <= 40; ++i) {
    batch += "*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n";
    replies += ':';
    replies += std::to_string(i);
    replies += "\r\n";
  }
  EXPECT_EQ(round_trip(peer, batch), replies);
  EXPECT_EQ(host.ran.size(), 40u);
}

TEST_F(ConnectionTest, CommandSplitAcrossTwoWritesRunsOnceComplete) {
  Peer& peer = open();
  const std::string_view first = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhel";
  send(peer, first);
  readable(peer);
  host.before_sleep();
  EXPECT_EQ(receive(peer), "");
  EXPECT_TRUE(host.ran.empty());
  // The partial command waits in the query buffer.
  EXPECT_EQ(peer.connection->query_buffer_size(), first.size());

  // The rest, with the start of another command whose header line is itself split.
  EXPECT_EQ(round_trip(peer, "lo\r\n*2\r\n$3\r\nGE"), "+OK\r\n");
  EXPECT_EQ(round_trip(peer, "T\r\n$1\r\nk\r\n"), "$5\r\nhello\r\n");
  EXPECT_EQ(host.ran_names(), (std::vector<std::string>{"set", "get"}));
  EXPECT_EQ(host.ran[0].args, (std::vector<std::string>{"SET", "k", "hello"}));
  EXPECT_EQ(host.traffic_.reads_processed, 3u);
  EXPECT_EQ(host.traffic_.writes_processed, 2u);
}

TEST_F(ConnectionTest, InlineCommandsAreSplitLikeAShell) {
  Peer& peer = open();
  EXPECT_EQ(round_trip(peer, "SET k \"a b\"\r\nGET k\r\nPING\n"), "+OK\r\n$3\r\na b\r\n+PONG\r\n");
  EXPECT_EQ(host.ran[0].args, (std::vector<std::string>{"SET", "k", "a b"}));
  // Split inline command, then an empty line, which is no command at all.
  send(peer, "EC");
  readable(peer);
  host.before_sleep();
  EXPECT_EQ(receive(peer), "");
  EXPECT_EQ(round_trip(peer, "HO x\r\n\r\n"), "$1\r\nx\r\n");
  EXPECT_EQ(host.ran_names(), (std::vector<std::string>{"set", "get", "ping", "echo"}));
}

TEST_F(ConnectionTest, ProtocolErrorAnswersWhatCameBeforeThenClosesAfterTheReply) {
  Peer& peer = open();
  send(peer, "*1\r\n$4\r\nPING\r\n*1\r\n$x\r\n*1\r\n$4\r\nPING\r\n");
  readable(peer);
  // Not closed yet: the error reply has to leave first.
  EXPECT_FALSE(peer.connection->closed());
  EXPECT_TRUE(host.closed.empty());
  host.before_sleep();
  EXPECT_EQ(receive(peer), "+PONG\r\n-ERR Protocol error: invalid bulk length\r\n");
  EXPECT_EQ(receive(peer), "<eof>");
  EXPECT_TRUE(peer.connection->closed());
  EXPECT_EQ(host.closed[peer.connection->id()], 1);
  // The command after the error never ran.
  EXPECT_EQ(host.ran_names(), (std::vector<std::string>{"ping"}));
  // A closed connection ignores further events.
  readable(peer);
  EXPECT_EQ(host.closed[peer.connection->id()], 1);
}

TEST_F(ConnectionTest, ProtocolErrorTexts) {
  struct Case {
    std::string_view request;
    std::string_view reply;
  };
  for (const Case& c : {
           Case{"*abc\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
           Case{"SET \"a b\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n"},
           Case{"*1\r\n+PING\r\n", "-ERR Protocol error: expected '$', got '+'\r\n"},
       }) {
    Peer& peer = open();
    EXPECT_EQ(round_trip(peer, c.request), c.reply) << c.request;
    EXPECT_EQ(receive(peer), "<eof>") << c.request;
    EXPECT_EQ(host.closed[peer.connection->id()], 1) << c.request;
  }
  EXPECT_TRUE(host.ran.empty());
}

TEST_F(ConnectionTest, QueryBufferOverTheLimitClosesWithoutReply) {
  host.limits.query_buffer_limit = 32;
  Peer& peer = open();
  // Under the limit, commands run as usual.
  EXPECT_EQ(round_trip(peer, "*1\r\n$4\r\nPING\r\n"), "+PONG\r\n");
  // A bulk argument announced bigger than the limit is closed on once the buffer exceeds it.
  send(peer, "*2\r\n$4\r\nECHO\r\n$100\r\n" + std::string(20, 'x'));
  readable(peer);
  EXPECT_TRUE(peer.connection->closed());
  host.before_sleep();
  EXPECT_EQ(receive(peer), "<eof>");
  EXPECT_EQ(host.closed[peer.connection->id()], 1);
  EXPECT_EQ(host.ran_names(), (std::vector<std::string>{"ping"}));
}

TEST_F(ConnectionTest, QuitRepliesThenClosesAndIgnoresTheRest) {
  Peer& peer = open();
  EXPECT_EQ(round_trip(peer, "PING\r\nQUIT\r\nSET k v\r\n"), "+PONG\r\n+OK\r\n");
  EXPECT_EQ(receive(peer), "<eof>");
  EXPECT_EQ(host.closed[peer.connection->id()], 1);
  EXPECT_EQ(host.ran_names(), (std::vector<std::string>{"ping", "quit"}));
  EXPECT_EQ(host.state().keyspace().db(0).size(), 0u);
}

TEST_F(ConnectionTest, PeerHangingUpClosesOnceAndDestructionDoesNotReportAgain) {
  Peer& peer = open();
  const uint64_t id = peer.connection->id();
  ::close(peer.fd);
  peer.fd = -1;
  readable(peer);
  EXPECT_TRUE(peer.connection->closed());
  EXPECT_EQ(host.closed[id], 1);
  EXPECT_EQ(peer.connection->reported_memory, 0u);
  peer.connection.reset();
  EXPECT_EQ(host.closed[id], 1);
}

TEST_F(ConnectionTest, DestroyingAnOpenConnectionReportsItsCloseOnce) {
  Peer& peer = open();
  const uint64_t id = peer.connection->id();
  peer.connection.reset();
  EXPECT_EQ(host.closed[id], 1);
  EXPECT_EQ(receive(peer), "<eof>");
}

TEST_F(ConnectionTest, OnlyCommandsThatRanAreReported) {
  Peer& peer = open();
  const std::string replies = round_trip(
      peer,
      "NOSUCH a\r\n"          // unknown: refused
      "GET\r\n"               // wrong arity: refused
      "MULTI\r\n"             // runs
      "SET k v\r\n"           // queued: does not run now
      "INCR\r\n"              // wrong arity inside MULTI: refused, flags the transaction
      "EXEC\r\n"              // runs (and aborts)
      "SET s notanumber\r\n"  // runs
      "INCR s\r\n");          // runs, with an error reply
  EXPECT_EQ(replies,
            "-ERR unknown command 'NOSUCH', with args beginning with: 'a' \r\n"
            "-ERR wrong number of arguments for 'get' command\r\n"
            "+OK\r\n"
            "+QUEUED\r\n"
            "-ERR wrong number of arguments for 'incr' command\r\n"
            "-EXECABORT Transaction discarded because of previous errors.\r\n"
            "+OK\r\n"
            "-ERR value is not an integer or out of range\r\n");
  EXPECT_EQ(host.ran_names(), (std::vector<std::string>{"multi", "exec", "set", "incr"}));
  EXPECT_EQ(host.ran[3].args, (std::vector<std::string>{"INCR", "s"}));
  // Every command counts as processed by the connection, run or refused.
  EXPECT_EQ(peer.connection->commands_processed(), 8u);
}

TEST_F(ConnectionTest, AuthenticationSwitchesTheParsersUnauthenticatedLimits) {
  host.state().acl().set_default_password("secret");  // what requirepass does
  Peer& refused = open();
  EXPECT_EQ(round_trip(refused, "PING\r\n*11\r\n"),
            "-NOAUTH Authentication required.\r\n"
            "-ERR Protocol error: unauthenticated multibulk length\r\n");
  EXPECT_EQ(receive(refused), "<eof>");
  EXPECT_TRUE(host.ran.empty());

  Peer& peer = open();
  std::string mset = "*11\r\n$4\r\nMSET\r\n";
  for (int i = 0; i < 5; ++i) mset += "$1\r\na\r\n$1\r\nb\r\n";
  EXPECT_EQ(round_trip(peer, "AUTH secret\r\n" + mset), "+OK\r\n+OK\r\n");
  EXPECT_EQ(host.ran_names(), (std::vector<std::string>{"auth", "mset"}));
  EXPECT_FALSE(peer.connection->closed());
}

TEST_F(ConnectionTest, BlockedClientKeepsLaterCommandsUntilServedThenResumes) {
  Peer& waiter = open();
  Peer& pusher = open();
  EXPECT_EQ(round_trip(waiter, "BLPOP q 0\r\nPING\r\n"), "");
  EXPECT_TRUE(waiter.connection->session().blocked.blocked());
  EXPECT_EQ(host.ran_names(), (std::vector<std::string>{"blpop"}));

  // The push serves the waiter through the host; the waiter's PING runs when it is resumed
  // before the loop sleeps, and both replies leave in one write.
  EXPECT_EQ(round_trip(pusher, "RPUSH q x\r\n"), ":1\r\n");
  EXPECT_EQ(receive(waiter), "*2\r\n$1\r\nq\r\n$1\r\nx\r\n+PONG\r\n");
  EXPECT_EQ(host.ran_names(), (std::vector<std::string>{"blpop", "rpush", "ping"}));
}

TEST_F(ConnectionTest, PublishedMessagesAreQueuedForTheSubscribersFlush) {
  Peer& subscriber = open();
  Peer& publisher = open();
  EXPECT_EQ(round_trip(subscriber, "SUBSCRIBE ch\r\n"),
            "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n");
  EXPECT_EQ(round_trip(publisher, "PUBLISH ch hello\r\n"), ":1\r\n");
  EXPECT_EQ(receive(subscriber), "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n");
}

TEST_F(ConnectionTest, OutputOverThePubSubHardLimitClosesAtTheFlushWithoutSending) {
  // One byte beyond the 16 KiB every client may hold.
  host.limits.output[kOutputClassPubSub].hard = 1;
  Peer& subscriber = open();
  Peer& publisher = open();
  EXPECT_EQ(round_trip(subscriber, "SUBSCRIBE ch\r\n"),
            "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n");
  // The request is bigger than one read (16 KiB a readable event): two reads bring it.
  send(publisher, "PUBLISH ch " + std::string(20 * 1024, 'x') + "\r\n");
  readable(publisher);
  EXPECT_EQ(host.ran_names(), (std::vector<std::string>{"subscribe"}));
  readable(publisher);
  host.before_sleep();
  EXPECT_EQ(receive(publisher), ":1\r\n");
  EXPECT_TRUE(subscriber.connection->close_asap());
  EXPECT_TRUE(subscriber.connection->closed());
  EXPECT_EQ(receive(subscriber), "<eof>");
  EXPECT_EQ(host.closed[subscriber.connection->id()], 1);
  EXPECT_FALSE(publisher.connection->closed());
}


// A bulk of 32 KiB or more that has not all arrived with its header is read into a block of
// its own size, which SET keeps as the value: the stored string's block is one of body and
// trailer (a copy would be exactly the body).
TEST_F(ConnectionTest, BigArgumentIsReadAsideAndKeptBySet) {
  Peer& peer = open();
  std::string value(100000, '\0');
  for (size_t i = 0; i < value.size(); ++i) value[i] = static_cast<char>(i * 13 + 7);
  const std::string header = "*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000\r\n";
  send(peer, header + value.substr(0, 1000));
  readable(peer);
  host.before_sleep();
  EXPECT_EQ(receive(peer), "");
  // CLIENT LIST's qbuf: the command's header in the buffer and what arrived of the value.
  EXPECT_EQ(peer.connection->query_buffer_size(), header.size() + 1000);
  EXPECT_GE(peer.connection->query_buffer_capacity(), header.size() + value.size() + 2);
  EXPECT_GE(peer.connection->memory_usage(), value.size() + 2);

  // The rest in pieces, then the options after it and a pipelined command.
  for (size_t at = 1000; at < value.size(); at += 30000) {
    send(peer, value.substr(at, 30000));
    readable(peer);
    EXPECT_TRUE(host.ran.empty());
  }
  send(peer, "\r\n$2\r\nPX\r\n$6\r\n100000\r\n*2\r\n$6\r\nSTRLEN\r\n$1\r\nk\r\n");
  // One read finishes the value (and stops there); the next ones bring the rest.
  for (int i = 0; i < 3; ++i) readable(peer);
  host.before_sleep();
  EXPECT_EQ(receive(peer), "+OK\r\n:100000\r\n");
  ASSERT_EQ(host.ran_names(), (std::vector<std::string>{"set", "strlen"}));
  EXPECT_EQ(host.ran[0].args, (std::vector<std::string>{"SET", "k", value, "PX", "100000"}));
  Entry* entry = host.state().keyspace().db(0).find_raw("k");
  ASSERT_NE(entry, nullptr);
  char scratch[kInt64BufferSize];
  EXPECT_EQ(entry->value.string_view(scratch), value);
  EXPECT_EQ(entry->value.payload_bytes(), sizeof(StringBlockHeader) + value.size() + 2);
  EXPECT_TRUE(entry->has_expiry());
  // Nothing is left of the argument on the connection.
  EXPECT_LT(peer.connection->query_buffer_capacity(), value.size());
}

// A command that does not keep its big argument still gets it; the block is freed after it.
TEST_F(ConnectionTest, BigArgumentsOfOtherCommandsAndSeveralInOneCommand) {
  Peer& peer = open();
  const std::string a(40000, 'a'), b(50000, 'b');
  const std::string request = "*5\r\n$4\r\nMSET\r\n$1\r\nx\r\n$40000\r\n" + a +
                              "\r\n$1\r\ny\r\n$50000\r\n" + b + "\r\n" +
                              "*2\r\n$4\r\nECHO\r\n$40000\r\n" + a + "\r\n";
  // Cut so that each big bulk arrives after its header.
  for (size_t at = 0; at < request.size(); at += 10000) {
    send(peer, request.substr(at, 10000));
    for (int i = 0; i < 3; ++i) readable(peer);
  }
  host.before_sleep();
  std::string replies;
  for (std::string more = receive(peer); !more.empty(); more = receive(peer)) replies += more;
  EXPECT_EQ(replies, "+OK\r\n$40000\r\n" + a + "\r\n");
  ASSERT_EQ(host.ran_names(), (std::vector<std::string>{"mset", "echo"}));
  EXPECT_EQ(host.ran[0].args, (std::vector<std::string>{"MSET", "x", a, "y", b}));
  char scratch[kInt64BufferSize];
  EXPECT_EQ(host.state().keyspace().db(0).find_raw("x")->value.string_view(scratch), a);
  EXPECT_EQ(host.state().keyspace().db(0).find_raw("y")->value.string_view(scratch), b);
  EXPECT_LT(peer.connection->query_buffer_capacity(), a.size());
}

// Inside MULTI the queued command keeps a copy: the block goes, EXEC stores the copy.
TEST_F(ConnectionTest, BigArgumentQueuedByMultiIsCopied) {
  Peer& peer = open();
  const std::string value(70000, 'm');
  EXPECT_EQ(round_trip(peer, "MULTI\r\n"), "+OK\r\n");
  send(peer, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$70000\r\n" + value.substr(0, 100));
  readable(peer);
  send(peer, value.substr(100) + "\r\n");
  readable(peer);
  host.before_sleep();
  EXPECT_EQ(receive(peer), "+QUEUED\r\n");
  EXPECT_EQ(round_trip(peer, "EXEC\r\n"), "*1\r\n+OK\r\n");
  char scratch[kInt64BufferSize];
  EXPECT_EQ(host.state().keyspace().db(0).find_raw("k")->value.string_view(scratch), value);
}

// Over client-query-buffer-limit while a big argument is being read aside: closed.
TEST_F(ConnectionTest, BigArgumentCountsAgainstTheQueryBufferLimit) {
  host.limits.query_buffer_limit = 60000;
  Peer& peer = open();
  send(peer, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000\r\n" + std::string(1000, 'x'));
  readable(peer);
  EXPECT_FALSE(peer.connection->closed());
  send(peer, std::string(60000, 'x'));
  readable(peer);
  EXPECT_TRUE(peer.connection->closed());
  EXPECT_TRUE(host.ran.empty());
}

// The I/O threads' split of a read and a flush (ClientRegistry::read_batch and its threaded
// flush): reads on the workers, then the events in order on this thread, then the writes on
// the workers and the bookkeeping here; the replies and counters are those of the plain path.
TEST_F(ConnectionTest, ThreadedReadsAndWritesAnswerEachClientInOrder) {
  IoThreads pool(3);
  std::vector<Peer*> peers;
  for (int i = 0; i < 9; ++i) peers.push_back(&open());
  size_t input_bytes = 0;
  for (int round = 0; round < 50; ++round) {
    std::vector<Connection*> batch;
    for (size_t i = 0; i < peers.size(); ++i) {
      const std::string key = "k" + std::to_string(i);
      const std::string request = "*2\r\n$4\r\nINCR\r\n$" + std::to_string(key.size()) +
                                  "\r\n" + key + "\r\n*1\r\n$4\r\nPING\r\n";
      send(*peers[i], request);
      input_bytes += request.size();
      ASSERT_TRUE(peers[i]->connection->readable_off_thread());
      batch.push_back(peers[i]->connection.get());
    }
    for (Connection* connection : batch) connection->prepare_read();
    auto read = [&batch](size_t index) { batch[index]->read_input(); };
    pool.for_each(batch.size(), read);
    for (Connection* connection : batch) connection->finish_read();
    for (Connection* connection : batch) connection->on_events(EventLoop::kReadable);
    ASSERT_EQ(host.queued_writes(), peers.size());
    for (Connection* connection : batch) {
      ASSERT_TRUE(connection->writable_off_thread());
      ASSERT_TRUE(connection->begin_flush());
    }
    auto write = [&batch](size_t index) { batch[index]->write_output(); };
    pool.for_each(batch.size(), write);
    for (Connection* connection : batch) EXPECT_TRUE(connection->end_flush());
    host.before_sleep();  // the queue marks, nothing left to send
    for (size_t i = 0; i < peers.size(); ++i) {
      EXPECT_EQ(receive(*peers[i]), ":" + std::to_string(round + 1) + "\r\n+PONG\r\n");
    }
  }
  EXPECT_EQ(host.traffic_.net_input_bytes, input_bytes);
  EXPECT_EQ(host.traffic_.reads_processed, 50u * peers.size());
}

// A client gone before its threaded read or write: the connection closes on this thread.
TEST_F(ConnectionTest, ThreadedReadOfAClosedPeerClosesTheConnection) {
  IoThreads pool(2);
  Peer& gone = open();
  Peer& alive = open();
  send(alive, "*1\r\n$4\r\nPING\r\n");
  ::close(gone.fd);
  gone.fd = -1;
  std::vector<Connection*> batch{gone.connection.get(), alive.connection.get()};
  for (Connection* connection : batch) connection->prepare_read();
  auto read = [&batch](size_t index) { batch[index]->read_input(); };
  pool.for_each(batch.size(), read);
  for (Connection* connection : batch) connection->finish_read();
  for (Connection* connection : batch) connection->on_events(EventLoop::kReadable);
  EXPECT_TRUE(gone.connection->closed());
  EXPECT_FALSE(alive.connection->closed());
  host.before_sleep();
  EXPECT_EQ(receive(alive), "+PONG\r\n");
}

}  // namespace
}  // namespace keywarden
