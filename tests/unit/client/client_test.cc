// keywarden::Client against a real keywarden-server and a stock redis-server: every check
// runs on both (and, where replies differ by protocol, in RESP2 and RESP3).
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>

#include "keywarden/keywarden.h"
#include "test_servers.h"

namespace keywarden {

// gtest prints Replies in failure messages through this.
void PrintTo(const Reply& reply, std::ostream* out) { *out << reply.to_string(); }

namespace {

using testing::ServerKind;
using testing::ServerProcess;
using namespace std::chrono_literals;

// One server of each kind for the whole run, stopped by the environment's TearDown.
class SharedServers : public ::testing::Environment {
 public:
  void SetUp() override {
    keywarden_ = std::make_unique<ServerProcess>(ServerKind::kKeywarden);
    redis_ = std::make_unique<ServerProcess>(ServerKind::kRedis);
  }
  void TearDown() override {
    keywarden_.reset();
    redis_.reset();
  }
  static int port(ServerKind kind) {
    return kind == ServerKind::kKeywarden ? keywarden_->port() : redis_->port();
  }

 private:
  static inline std::unique_ptr<ServerProcess> keywarden_;
  static inline std::unique_ptr<ServerProcess> redis_;
};

const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new SharedServers);

struct Param {
  ServerKind kind;
  int resp;
};

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  return std::string(testing::server_name(info.param.kind)) + "_resp" +
         std::to_string(info.param.resp);
}

class ClientTest : public ::testing::TestWithParam<Param> {
 protected:
  ClientOptions options() const {
    ClientOptions o;
    o.port = SharedServers::port(GetParam().kind);
    o.resp = GetParam().resp;
    o.command_timeout = 3000ms;
    return o;
  }
  bool resp3() const { return GetParam().resp == 3; }
  // A key private to this test, so the shared server needs no flushing between tests.
  std::string key(const std::string& suffix) const {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return std::string(info->name()) + ":" + suffix;
  }
};

INSTANTIATE_TEST_SUITE_P(Servers, ClientTest,
                         ::testing::Values(Param{ServerKind::kKeywarden, 2},
                                           Param{ServerKind::kKeywarden, 3},
                                           Param{ServerKind::kRedis, 2},
                                           Param{ServerKind::kRedis, 3}),
                         param_name);

TEST_P(ClientTest, BasicRoundTrips) {
  Client client(options());
  std::string k = key("s");
  EXPECT_EQ(client.command({"SET", k, "hello"}), Reply::simple_string("OK"));
  EXPECT_EQ(client.command("GET", k), Reply::bulk("hello"));
  EXPECT_TRUE(client.command("GET", key("missing")).is_null());
  std::string n = key("n");
  EXPECT_EQ(client.command("INCRBY", n, 5).integer(), 5);
  EXPECT_EQ(client.command(std::vector<std::string>{"INCRBY", n, "-2"}).integer(), 3);
  EXPECT_EQ(client.command("INCRBYFLOAT", n, 1.5).str(), "4.5");
  std::string l = key("l");
  client.command("RPUSH", l, "a", "b", "c");
  EXPECT_EQ(client.command("LRANGE", l, 0, -1),
            Reply::array({Reply::bulk("a"), Reply::bulk("b"), Reply::bulk("c")}));
  EXPECT_EQ(client.command("LRANGE", key("none"), 0, -1), Reply::array({}));
  std::string binary("a\0b\r\nc", 6);
  client.command({"SET", k, binary});
  EXPECT_EQ(client.command("GET", k).str(), binary);
}

TEST_P(ClientTest, ProtocolSpecificReplyTypes) {
  Client client(options());
  std::string h = key("h");
  client.command("HSET", h, "f", "v");
  Reply all = client.command("HGETALL", h);
  EXPECT_EQ(all.type(), resp3() ? Reply::Type::kMap : Reply::Type::kArray);
  ASSERT_NE(all.find("f"), nullptr);
  EXPECT_EQ(all.find("f")->str(), "v");

  std::string s = key("set");
  client.command("SADD", s, "m");
  Reply members = client.command("SMEMBERS", s);
  EXPECT_EQ(members.type(), resp3() ? Reply::Type::kSet : Reply::Type::kArray);
  EXPECT_EQ(members.elements(), std::vector<Reply>{Reply::bulk("m")});

  std::string z = key("z");
  client.command("ZADD", z, 1.5, "m");
  Reply score = client.command("ZSCORE", z, "m");
  if (resp3()) {
    EXPECT_EQ(score, Reply::double_value(1.5));
  } else {
    EXPECT_EQ(score, Reply::bulk("1.5"));
  }

  // RESP3 null is one type for both RESP2 nulls (bulk and array).
  EXPECT_TRUE(client.command("BLPOP", key("empty"), "0.01").is_null());

  Reply info = client.command("INFO", "server");
  EXPECT_EQ(info.type(), resp3() ? Reply::Type::kVerbatim : Reply::Type::kBulk);
  EXPECT_NE(info.str().find("redis_version"), std::string::npos);
  if (resp3()) {
    EXPECT_EQ(info.verbatim_format(), "txt");
  }

  // The remaining RESP3 types come from Lua's RESP3 conversions.
  Reply big = client.command("EVAL", "redis.setresp(3); return {big_number='123456789012345678901234567890'}", 0);
  Reply boolean = client.command("EVAL", "redis.setresp(3); return redis.call('HEXISTS', KEYS[1], 'f')", 1, h);
  Reply dbl = client.command("EVAL", "return {double=2.5}", 0);
  if (resp3()) {
    EXPECT_EQ(big, Reply::big_number("123456789012345678901234567890"));
    EXPECT_EQ(dbl, Reply::double_value(2.5));
    EXPECT_EQ(boolean, Reply::integer(1));  // HEXISTS is an integer in RESP3 too
  } else {
    EXPECT_EQ(big, Reply::bulk("123456789012345678901234567890"));
    EXPECT_EQ(dbl, Reply::bulk("2.5"));
  }
  Reply t = client.command("EVAL", "redis.setresp(3); return redis.call('EXISTS', KEYS[1]) == 1", 1, h);
  EXPECT_EQ(t, resp3() ? Reply::boolean(true) : Reply::integer(1));
  Reply f = client.command("EVAL", "redis.setresp(3); return redis.call('EXISTS', KEYS[1]) == 2", 1, h);
  EXPECT_EQ(f, resp3() ? Reply::boolean(false) : Reply::integer(0));
}

TEST_P(ClientTest, ErrorRepliesThrowServerError) {
  Client client(options());
  std::string k = key("s");
  client.command("SET", k, "x");
  try {
    client.command("LPUSH", k, "a");
    FAIL() << "expected ServerError";
  } catch (const ServerError& e) {
    EXPECT_EQ(e.code(), "WRONGTYPE");
    EXPECT_EQ(e.message(), "Operation against a key holding the wrong kind of value");
  }
  try {
    client.command("NOSUCHCOMMAND");
    FAIL() << "expected ServerError";
  } catch (const ServerError& e) {
    EXPECT_EQ(e.code(), "ERR");
  }
  // The connection is still usable after an error reply.
  EXPECT_EQ(client.command("GET", k).str(), "x");
  EXPECT_THROW(client.command("GET", k).integer(), ProtocolError);
}

TEST_P(ClientTest, Pipeline) {
  Client client(options());
  std::string k = key("p");
  Pipeline p = client.pipeline();
  p.add({"SET", k, "1"}).add("INCR", k).add("LPUSH", k, "x").add("GET", k);
  EXPECT_EQ(p.size(), 4u);
  std::vector<Reply> replies = p.exec();
  ASSERT_EQ(replies.size(), 4u);
  EXPECT_EQ(replies[0], Reply::simple_string("OK"));
  EXPECT_EQ(replies[1], Reply::integer(2));
  EXPECT_TRUE(replies[2].is_error());
  EXPECT_EQ(replies[2].error_code(), "WRONGTYPE");
  EXPECT_EQ(replies[3], Reply::bulk("2"));
  EXPECT_TRUE(p.empty());
  EXPECT_TRUE(p.exec().empty());

  // A large batch: writes and replies interleave without deadlocking.
  std::string big(1000, 'v');
  for (int i = 0; i < 5000; ++i) p.add("SET", key(std::to_string(i % 10)), big);
  for (int i = 0; i < 5000; ++i) p.add("GET", key(std::to_string(i % 10)));
  replies = p.exec();
  ASSERT_EQ(replies.size(), 10000u);
  EXPECT_EQ(replies.back().str(), big);
}

TEST_P(ClientTest, Transaction) {
  Client client(options());
  std::string c = key("counter");
  std::string s = key("string");
  client.command("SET", s, "text");
  std::vector<Reply> replies = client.transaction([&](Pipeline& t) {
    t.add("INCR", c);
    t.add("INCR", s);  // fails at run time: stays an error in the result
    t.add("INCRBY", c, 10);
  });
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_EQ(replies[0], Reply::integer(1));
  EXPECT_TRUE(replies[1].is_error());
  EXPECT_EQ(replies[2], Reply::integer(11));

  // A command refused while queueing aborts the whole transaction.
  try {
    client.transaction([&](Pipeline& t) {
      t.add("INCR", c);
      t.add("NOSUCHCOMMAND");
    });
    FAIL() << "expected EXECABORT";
  } catch (const ServerError& e) {
    EXPECT_EQ(e.code(), "EXECABORT");
  }
  EXPECT_EQ(client.command("GET", c).str(), "11");
  EXPECT_TRUE(client.transaction([](Pipeline&) {}).empty());
}

TEST_P(ClientTest, EvalShaReloadsAfterScriptFlush) {
  Client client(options());
  Script script("return KEYS[1] .. ':' .. ARGV[1]");
  EXPECT_EQ(script.sha().size(), 40u);
  client.command("SCRIPT", "FLUSH");
  EXPECT_EQ(client.eval_sha(script, {"k"}, {"a"}).str(), "k:a");
  EXPECT_EQ(client.command("SCRIPT", "EXISTS", script.sha()),
            Reply::array({Reply::integer(1)}));
  EXPECT_EQ(client.eval_sha(script, {"k2"}, {"b"}).str(), "k2:b");
  client.command("SCRIPT", "FLUSH");
  EXPECT_EQ(client.eval_sha(script, {"k3"}, {"c"}).str(), "k3:c");
  // A script error is a ServerError, not retried.
  Script failing("return redis.call('NOSUCHCOMMAND')");
  EXPECT_THROW(client.eval_sha(failing), ServerError);
}

TEST_P(ClientTest, DatabaseAndClientName) {
  ClientOptions o = options();
  o.database = 3;
  o.client_name = "kw-test-client";
  Client in_db3(o);
  std::string k = key("db");
  in_db3.command("SET", k, "three");
  EXPECT_EQ(in_db3.command("CLIENT", "GETNAME").str(), "kw-test-client");
  Client in_db0(options());
  EXPECT_TRUE(in_db0.command("GET", k).is_null());
  EXPECT_EQ(in_db0.command("SELECT", 3), Reply::simple_string("OK"));
  EXPECT_EQ(in_db0.command("GET", k).str(), "three");
  in_db3.command("DEL", k);
}

TEST_P(ClientTest, CommandTimeout) {
  ClientOptions o = options();
  o.command_timeout = 200ms;
  Client client(o);
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(client.command("BLPOP", key("never"), 5), TimeoutError);
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GE(elapsed, 190ms);
  EXPECT_LT(elapsed, 1500ms);
  // The timed-out connection was dropped; the next command gets a fresh one and its own reply.
  EXPECT_EQ(client.command("PING"), Reply::simple_string("PONG"));
}

TEST_P(ClientTest, PoolUnderThreads) {
  ClientOptions o = options();
  o.pool_size = 3;
  o.client_name = "pool-" + std::string(testing::server_name(GetParam().kind)) +
                  std::to_string(GetParam().resp);
  Client client(o);
  std::string counter = key("counter");
  constexpr int kThreads = 8;
  constexpr int kIterations = 200;
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::string own = key("own" + std::to_string(t));
      for (int i = 0; i < kIterations; ++i) {
        client.command("INCR", counter);
        client.command("SET", own, i);
        if (client.command("GET", own).str() != std::to_string(i)) ++mismatches;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(client.command("GET", counter).str(), std::to_string(kThreads * kIterations));
  // No more than pool_size connections were opened.
  std::string list = client.command("CLIENT", "LIST").str();
  size_t named = 0;
  for (size_t at = list.find("name=" + o.client_name + " "); at != std::string::npos;
       at = list.find("name=" + o.client_name + " ", at + 1)) {
    ++named;
  }
  EXPECT_GE(named, 1u);
  EXPECT_LE(named, 3u);
}

// Servers of its own: started with a password, or stopped and restarted.
class ClientServerTest : public ::testing::TestWithParam<Param> {};

INSTANTIATE_TEST_SUITE_P(Servers, ClientServerTest,
                         ::testing::Values(Param{ServerKind::kKeywarden, 2},
                                           Param{ServerKind::kKeywarden, 3},
                                           Param{ServerKind::kRedis, 2},
                                           Param{ServerKind::kRedis, 3}),
                         param_name);

TEST_P(ClientServerTest, Authentication) {
  ServerProcess server(GetParam().kind, {"--requirepass", "s3cret"});
  ClientOptions o;
  o.port = server.port();
  o.resp = GetParam().resp;
  {
    ClientOptions none = o;
    none.resp = 2;  // HELLO 3 without AUTH is itself refused with NOAUTH
    Client client(none);
    try {
      client.command("GET", "k");
      FAIL() << "expected NOAUTH";
    } catch (const ServerError& e) {
      EXPECT_EQ(e.code(), "NOAUTH");
    }
  }
  {
    ClientOptions wrong = o;
    wrong.password = "nope";
    Client client(wrong);
    try {
      client.command("PING");
      FAIL() << "expected WRONGPASS";
    } catch (const ServerError& e) {
      EXPECT_EQ(e.code(), "WRONGPASS");
    }
  }
  o.password = "s3cret";
  Client client(o);
  EXPECT_EQ(client.command("PING"), Reply::simple_string("PONG"));
  o.username = "default";
  o.client_name = "named";
  Client with_user(o);
  EXPECT_EQ(with_user.command("CLIENT", "GETNAME").str(), "named");
}

TEST_P(ClientServerTest, ConnectFailureIsTransportError) {
  ClientOptions o;
  o.port = testing::free_port();  // nothing listens there
  o.resp = GetParam().resp;
  o.reconnect_backoff_min = 5s;
  Client client(o);
  EXPECT_THROW(client.command("PING"), TransportError);
  // Within the backoff the next command fails fast, without trying (a connect attempt would
  // take the connect timeout's worth at most; failing fast takes microseconds, so 1 s is only
  // room for a loaded machine).
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(client.command("PING"), TransportError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

// Not about any server: nothing listens on the port.
TEST(ClientBackoffTest, DoublesBetweenFailedAttemptsUpToTheMaximum) {
  ClientOptions o;
  o.port = testing::free_port();
  o.reconnect_backoff_min = 100ms;
  o.reconnect_backoff_max = 250ms;
  Client client(o);
  // -1 when the command made a connection attempt, else the announced wait in ms.
  auto next_attempt_ms = [&]() -> int {
    try {
      client.command("PING");
    } catch (const TransportError& e) {
      std::string text = e.what();
      size_t at = text.find("next attempt in ");
      if (at == std::string::npos) return -1;
      return std::stoi(text.substr(at + 16));
    }
    return -2;
  };
  EXPECT_EQ(next_attempt_ms(), -1);
  int first = next_attempt_ms();
  EXPECT_GT(first, 50);
  EXPECT_LE(first, 100);
  std::this_thread::sleep_for(110ms);
  EXPECT_EQ(next_attempt_ms(), -1);
  int second = next_attempt_ms();
  EXPECT_GT(second, 150);
  EXPECT_LE(second, 200);
  std::this_thread::sleep_for(210ms);
  EXPECT_EQ(next_attempt_ms(), -1);
  int third = next_attempt_ms();  // capped at 250, not 400
  EXPECT_GT(third, 200);
  EXPECT_LE(third, 250);
}

TEST_P(ClientServerTest, UnixSocket) {
  std::string path = "/tmp/kw-client-test-" + std::to_string(::getpid()) + "-" +
                     testing::server_name(GetParam().kind) + ".sock";
  struct Unlink {
    std::string path;
    ~Unlink() { ::unlink(path.c_str()); }
  } unlink_at_end{path};
  ServerProcess server(GetParam().kind, {"--unixsocket", path});
  ASSERT_TRUE(testing::wait_unix_socket_accepts(path));
  ClientOptions o;
  o.unix_socket = path;
  o.resp = GetParam().resp;
  Client client(o);
  EXPECT_EQ(client.command("SET", "k", "over unix"), Reply::simple_string("OK"));
  EXPECT_EQ(client.command("GET", "k").str(), "over unix");
  server.stop();
  ::unlink(path.c_str());  // a killed server leaves its socket file
  EXPECT_THROW(client.command("GET", "k"), TransportError);
}

TEST_P(ClientServerTest, ReconnectsAfterServerRestart) {
  ServerProcess server(GetParam().kind);
  ClientOptions o;
  o.port = server.port();
  o.resp = GetParam().resp;
  o.client_name = "restarting";
  o.reconnect_backoff_min = 20ms;
  o.reconnect_backoff_max = 100ms;
  Client client(o);
  client.command("SET", "k", "before");
  server.stop();
  EXPECT_THROW(client.command("GET", "k"), TransportError);
  server.start();
  std::this_thread::sleep_for(150ms);  // past the backoff
  EXPECT_TRUE(client.command("GET", "k").is_null());  // a new, empty server
  EXPECT_EQ(client.command("CLIENT", "GETNAME").str(), "restarting");  // handshake rerun
}

TEST_P(ClientServerTest, ConnectionKilledMidCommandThrowsThenRecovers) {
  ServerProcess server(GetParam().kind);
  ClientOptions o;
  o.port = server.port();
  o.resp = GetParam().resp;
  o.client_name = "victim";
  Client victim(o);
  victim.command("PING");
  std::thread killer([&] {
    std::this_thread::sleep_for(100ms);
    ClientOptions k;
    k.port = server.port();
    Client(k).command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes");
  });
  EXPECT_THROW(victim.command("BLPOP", "nothing", 2), TransportError);
  killer.join();
  EXPECT_EQ(victim.command("PING"), Reply::simple_string("PONG"));
}

TEST(ClientProtocolTest, MalformedReplyIsProtocolError) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  socklen_t size = sizeof(address);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &size);
  std::thread fake([listener] {
    int fd = ::accept(listener, nullptr, nullptr);
    char buf[256];
    (void)::read(fd, buf, sizeof(buf));
    const char garbage[] = "?this is not resp\r\n";
    (void)::write(fd, garbage, sizeof(garbage) - 1);
    (void)::read(fd, buf, sizeof(buf));  // until the client drops the connection
    ::close(fd);
  });
  ClientOptions o;
  o.port = ntohs(address.sin_port);
  Client client(o);
  EXPECT_THROW(client.command("PING"), ProtocolError);
  fake.join();
  ::close(listener);
}

}  // namespace
}  // namespace keywarden
