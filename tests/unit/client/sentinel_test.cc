// ClientOptions::sentinel against Debian's redis-sentinel watching a primary and its replica,
// both keywarden or both stock redis-server: the client finds the primary through the
// sentinels, follows a failover (SENTINEL FAILOVER) to the promoted replica, drops a connection
// that answers -READONLY so that the next command asks again, takes locks there, and reports
// a group no sentinel knows clearly.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "keywarden/keywarden.h"
#include "test_servers.h"

namespace keywarden {
namespace {

using namespace std::chrono_literals;
using testing::ServerKind;
using testing::ServerProcess;
using Clock = std::chrono::steady_clock;

constexpr const char* kGroup = "kwgroup";

template <typename Predicate>
bool eventually(Predicate predicate, std::chrono::seconds limit = 30s) {
  const Clock::time_point until = Clock::now() + limit;
  while (Clock::now() < until) {
    try {
      if (predicate()) return true;
    } catch (const Error&) {
      // not yet: a node or the link is still changing
    }
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

// A primary, its replica and one sentinel (quorum 1) watching them.
class SentinelGroup {
 public:
  explicit SentinelGroup(ServerKind kind) : nodes_(kind, "kw-sentinel") {
    // The sentinel learns of replicas from the primary's INFO, which it asks for at once and
    // then every 10 s: with the link up before it starts, it knows the replica from the start
    // rather than 10 s later.
    Client replica = direct(replica_port());
    if (!eventually([&] {
          return replica.command("INFO", "replication").str().find("master_link_status:up") !=
                 std::string::npos;
        })) {
      throw std::runtime_error("the replica did not connect to its primary");
    }
    sentinel_port_ = testing::free_port();
    const std::string config = nodes_.directory() + "/sentinel.conf";
    std::ofstream(config) << "port " << sentinel_port_ << "\nbind 127.0.0.1\ndir "
                          << nodes_.directory() << "\nsentinel monitor " << kGroup
                          << " 127.0.0.1 " << primary_port()
                          << " 1\nsentinel down-after-milliseconds " << kGroup
                          << " 1000\nsentinel failover-timeout " << kGroup << " 10000\n";
    sentinel_ = std::make_unique<ServerProcess>(
        std::vector<std::string>{"/usr/bin/redis-sentinel", config}, sentinel_port_);
  }
  ~SentinelGroup() { sentinel_.reset(); }

  ClientOptions options() const {
    ClientOptions o;
    o.port = 1;  // unused through Sentinel: a wrong value proves it
    o.sentinel.addresses = {{"127.0.0.1", testing::free_port()},  // nobody there: skipped
                            {"127.0.0.1", sentinel_port_}};
    o.sentinel.master_name = kGroup;
    o.connect_timeout = 2s;
    o.command_timeout = 5s;
    o.reconnect_backoff_min = 10ms;
    o.reconnect_backoff_max = 100ms;
    return o;
  }
  Client direct(int port) const {
    ClientOptions o;
    o.port = port;
    return Client(o);
  }
  int primary_port() { return nodes_.primary().port(); }
  int replica_port() { return nodes_.replica().port(); }

  // The port the sentinel names for the group now.
  int named_port() {
    Client sentinel = direct(sentinel_port_);
    Reply reply = sentinel.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", kGroup);
    return std::atoi(reply.elements().at(1).str().c_str());
  }
  // The sentinel has seen the replica and has its INFO with the link to the primary up (a
  // failover needs such a replica).
  bool knows_the_replica() {
    Client sentinel = direct(sentinel_port_);
    const Reply replicas = sentinel.command("SENTINEL", "REPLICAS", kGroup);
    if (replicas.size() != 1) return false;
    const Reply& fields = replicas[0];
    const Reply* flags = fields.find("flags");
    const Reply* link = fields.find("master-link-status");
    return flags != nullptr && flags->str() == "slave" && link != nullptr && link->str() == "ok";
  }
  void failover() {
    Client sentinel = direct(sentinel_port_);
    sentinel.command("SENTINEL", "FAILOVER", kGroup);
  }

 private:
  testing::ReplicatedPair nodes_;
  std::unique_ptr<ServerProcess> sentinel_;
  int sentinel_port_ = 0;
};

int64_t served_port(Client& client) {
  const Reply reply = client.command("CONFIG", "GET", "port");
  return std::atoll(reply.elements().at(1).str().c_str());
}

class SentinelTest : public ::testing::TestWithParam<ServerKind> {};

TEST_P(SentinelTest, FindsThePrimaryAndFollowsAFailover) {
  SentinelGroup group(GetParam());
  Client client(group.options());
  ASSERT_EQ(served_port(client), group.primary_port());
  client.command("SET", "before", "1");
  SimpleLock held = client.get_simple_lock("lock:sentinel");
  ASSERT_TRUE(held.try_lock(60s));
  // The replica has everything before the failover starts, so the promoted one has the lock.
  Client replica = group.direct(group.replica_port());
  ASSERT_TRUE(eventually([&] { return replica.command("EXISTS", "lock:sentinel").integer() == 1; }));
  ASSERT_TRUE(eventually([&] { return group.knows_the_replica(); }));

  group.failover();
  ASSERT_TRUE(eventually([&] { return group.named_port() == group.replica_port(); }));
  // The pooled connection still points at the old primary. Once that one is a replica, a
  // write there answers -READONLY, which makes the client ask the sentinels again; a command
  // may also fail while the roles change. Retried, writes reach the promoted replica.
  ASSERT_TRUE(eventually([&] {
    client.command("SET", "after", "2");
    return served_port(client) == group.replica_port();
  }));
  EXPECT_EQ(client.command("GET", "before").str(), "1");
  EXPECT_TRUE(held.is_held());
  held.unlock();

  Lock lock = client.get_lock("lock:after-failover");
  ASSERT_TRUE(lock.try_lock());
  EXPECT_TRUE(lock.is_held());
  lock.unlock();
}

TEST_P(SentinelTest, AGroupNoSentinelKnowsIsAClearError) {
  SentinelGroup group(GetParam());
  ClientOptions options = group.options();
  options.sentinel.master_name = "nosuchgroup";
  Client client(options);
  try {
    client.command("PING");
    FAIL() << "PING went somewhere";
  } catch (const TransportError& error) {
    EXPECT_NE(std::string(error.what()).find("no sentinel named a primary for 'nosuchgroup'"),
              std::string::npos)
        << error.what();
  }
}

TEST_P(SentinelTest, AReplicaNamedAsPrimaryIsRefused) {
  // A sentinel answering with a node that is (no longer) a primary: the ROLE check refuses it.
  SentinelGroup group(GetParam());
  Client replica = group.direct(group.replica_port());
  ASSERT_TRUE(eventually([&] {
    return replica.command("ROLE").elements().at(0).str() == "slave";
  }));
  // Turn the primary into a replica of its own replica behind the sentinel's back, then
  // connect afresh: the sentinel still names the old primary.
  Client primary = group.direct(group.primary_port());
  replica.command("REPLICAOF", "NO", "ONE");
  primary.command("REPLICAOF", "127.0.0.1", std::to_string(group.replica_port()));
  Client client(group.options());
  bool refused = false;
  try {
    client.command("PING");
  } catch (const TransportError& error) {
    refused = std::string(error.what()).find("is not a primary") != std::string::npos ||
              std::string(error.what()).find("ROLE") != std::string::npos;
    if (!refused) ADD_FAILURE() << error.what();
  }
  // Either the sentinel already names the new primary (then PING succeeded there) or the ROLE
  // check refused the old one.
  EXPECT_TRUE(refused || group.named_port() == group.replica_port());
}

INSTANTIATE_TEST_SUITE_P(
    Servers, SentinelTest, ::testing::Values(ServerKind::kKeywarden, ServerKind::kRedis),
    [](const auto& info) { return testing::server_name(info.param); });

}  // namespace
}  // namespace keywarden
