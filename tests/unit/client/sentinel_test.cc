// ClientOptions::sentinel against Debian's redis-sentinel watching a primary and its replicas,
// all keywarden or all stock redis-server: the client finds the primary through the sentinels,
// follows their +switch-master at once (pooled connections, a Subscriber, a watchdog-renewed
// lock; falling over to the next sentinel when the one it listens to is gone), drops a
// connection that answers -READONLY, reads from a replica when asked, reports a group no
// sentinel knows clearly, and runs the lock family on a primary with two replicas, durable
// grants and a failover under a held lock with queued waiters included.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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

// A primary, its replica (and `extra_replicas` more) and `sentinels` sentinels (quorum 1)
// watching them. The group's queries go to the first sentinel until use_sentinel() says
// otherwise.
class SentinelGroup {
 public:
  explicit SentinelGroup(ServerKind kind, int extra_replicas = 0, int sentinels = 1)
      : nodes_(kind, "kw-sentinel") {
    for (int i = 0; i < extra_replicas; ++i) {
      const std::string dir = nodes_.directory() + "/replica" + std::to_string(i + 2);
      ::mkdir(dir.c_str(), 0700);
      extra_.push_back(std::make_unique<ServerProcess>(
          kind, std::vector<std::string>{"--dir", dir, "--replicaof", "127.0.0.1",
                                         std::to_string(primary_port())}));
    }
    // The sentinel learns of replicas from the primary's INFO, which it asks for at once and
    // then every 10 s: with the links up before it starts, it knows the replicas from the start
    // rather than 10 s later.
    for (int port : replica_ports()) {
      Client replica = direct(port);
      if (!eventually([&] {
            return replica.command("INFO", "replication").str().find("master_link_status:up") !=
                   std::string::npos;
          })) {
        throw std::runtime_error("a replica did not connect to its primary");
      }
    }
    for (int i = 0; i < sentinels; ++i) {
      const int port = testing::free_port();
      const std::string config = nodes_.directory() + "/sentinel" + std::to_string(i) + ".conf";
      std::ofstream(config) << "port " << port << "\nbind 127.0.0.1\ndir "
                            << nodes_.directory() << "\nsentinel monitor " << kGroup
                            << " 127.0.0.1 " << primary_port()
                            << " 1\nsentinel down-after-milliseconds " << kGroup
                            << " 1000\nsentinel failover-timeout " << kGroup << " 10000\n";
      sentinels_.push_back(std::make_unique<ServerProcess>(
          std::vector<std::string>{"/usr/bin/redis-sentinel", config}, port));
    }
    sentinel_port_ = sentinels_.front()->port();
  }
  ~SentinelGroup() {
    sentinels_.clear();
    extra_.clear();
  }

  ClientOptions options() const {
    ClientOptions o;
    o.port = 1;  // unused through Sentinel: a wrong value proves it
    o.sentinel.addresses = {{"127.0.0.1", testing::free_port()}};  // nobody there: skipped
    for (const auto& sentinel : sentinels_) {
      o.sentinel.addresses.emplace_back("127.0.0.1", sentinel->port());
    }
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
  std::vector<int> replica_ports() {
    std::vector<int> ports{replica_port()};
    for (const auto& extra : extra_) ports.push_back(extra->port());
    return ports;
  }
  int sentinel_port(size_t i = 0) const { return sentinels_.at(i)->port(); }
  void stop_sentinel(size_t i) { sentinels_.at(i)->stop(); }
  void use_sentinel(size_t i) { sentinel_port_ = sentinels_.at(i)->port(); }

  // The port the sentinel names for the group now.
  int named_port() {
    Client sentinel = direct(sentinel_port_);
    Reply reply = sentinel.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", kGroup);
    return std::atoi(reply.elements().at(1).str().c_str());
  }
  // The sentinel has seen every replica and has their INFO with the link to the primary up (a
  // failover needs such a replica).
  bool knows_the_replica() {
    Client sentinel = direct(sentinel_port_);
    const Reply replicas = sentinel.command("SENTINEL", "REPLICAS", kGroup);
    if (replicas.size() != 1 + extra_.size()) return false;
    for (size_t i = 0; i < replicas.size(); ++i) {
      const Reply& fields = replicas[i];
      const Reply* flags = fields.find("flags");
      const Reply* link = fields.find("master-link-status");
      if (flags == nullptr || flags->str() != "slave" || link == nullptr || link->str() != "ok") {
        return false;
      }
    }
    return true;
  }
  void stop_replica() { nodes_.replica().stop(); }
  // Whether the sentinel flags the replica on `port` subjectively down.
  bool sees_replica_down(int port) {
    Client sentinel = direct(sentinel_port_);
    const Reply replicas = sentinel.command("SENTINEL", "REPLICAS", kGroup);
    for (size_t i = 0; i < replicas.size(); ++i) {
      const Reply* replica_port = replicas[i].find("port");
      const Reply* flags = replicas[i].find("flags");
      if (replica_port != nullptr && flags != nullptr &&
          replica_port->str() == std::to_string(port)) {
        return flags->str().find("s_down") != std::string::npos;
      }
    }
    return false;
  }
  void failover() {
    Client sentinel = direct(sentinel_port_);
    sentinel.command("SENTINEL", "FAILOVER", kGroup);
  }

 private:
  testing::ReplicatedPair nodes_;
  std::vector<std::unique_ptr<ServerProcess>> extra_;
  std::vector<std::unique_ptr<ServerProcess>> sentinels_;
  int sentinel_port_ = 0;  // the one the group's queries go to
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

// Whether CLIENT LIST of the server on `port` shows a connection named `name` whose line also
// holds `field` (" sub=1 ", " cmd=get ").
bool has_client(SentinelGroup& group, int port, const std::string& name,
                const std::string& field) {
  Client node = group.direct(port);
  const std::string list = node.command("CLIENT", "LIST").str();
  size_t start = 0;
  while (start < list.size()) {
    size_t end = list.find('\n', start);
    if (end == std::string::npos) end = list.size();
    const std::string line = list.substr(start, end - start) + " ";
    if (line.find(" name=" + name + " ") != std::string::npos &&
        line.find(field) != std::string::npos) {
      return true;
    }
    start = end + 1;
  }
  return false;
}

bool has_subscribed_client(SentinelGroup& group, int port, const std::string& name) {
  return has_client(group, port, name, " sub=1 ");
}

TEST_P(SentinelTest, FollowsSwitchMasterBeforeAnyError) {
  // An idle client hears the sentinel's +switch-master: its next command goes to the promoted
  // replica at once (the old primary, which a forced failover demotes only after the switch,
  // would still have taken the write), a Subscriber moves there too, and a lock held with its
  // watchdog is either kept on the new primary or reported lost with a reason.
  SentinelGroup group(GetParam());
  ClientOptions options = group.options();
  options.lock_watchdog_timeout = 3s;  // renewed every second
  std::atomic<int> switches{0};
  std::mutex switch_mutex;
  std::string switched_to;
  options.sentinel.on_primary_switch = [&](const std::string&, const std::string& to) {
    std::lock_guard<std::mutex> guard(switch_mutex);
    switched_to = to;
    ++switches;
  };
  Client client(options);
  ASSERT_EQ(served_port(client), group.primary_port());

  ClientOptions subscriber_options = options;
  subscriber_options.client_name = "kw-follower";
  Subscriber subscriber(subscriber_options);
  std::atomic<int> reconnects{0};
  subscriber.on_reconnect([&] { ++reconnects; });
  std::mutex messages_mutex;
  std::vector<std::string> messages;
  subscriber.subscribe("news", [&](const Message& message) {
    std::lock_guard<std::mutex> guard(messages_mutex);
    messages.push_back(message.payload);
  });
  ASSERT_TRUE(has_subscribed_client(group, group.primary_port(), "kw-follower"));

  Lock lock = client.get_lock("lock:watched");
  std::atomic<int> lost{0};
  std::atomic<int> lost_reason{-1};
  lock.on_lost([&](LockLostReason reason) {
    lost_reason = static_cast<int>(reason);
    ++lost;
  });
  lock.lock();  // no lease: the watchdog renews it
  // Everything written so far is on the replica before the failover starts.
  ASSERT_GE(client.command("WAIT", "1", "10000").integer(), 1);
  ASSERT_TRUE(eventually([&] { return group.knows_the_replica(); }));

  group.failover();
  ASSERT_TRUE(eventually([&] { return switches.load() >= 1; }, 60s));
  {
    std::lock_guard<std::mutex> guard(switch_mutex);
    EXPECT_EQ(switched_to, "127.0.0.1:" + std::to_string(group.replica_port()));
  }
  // The first command after the switch: no -READONLY, no transport error, and the node that
  // served it is the promoted replica, a primary now.
  client.command("SET", "after-switch", "1");
  EXPECT_EQ(served_port(client), group.replica_port());
  EXPECT_EQ(client.command("ROLE").elements().at(0).str(), "master");
  Client promoted = group.direct(group.replica_port());
  EXPECT_EQ(promoted.command("GET", "after-switch").str(), "1");

  // The Subscriber reconnected to the promoted replica and gets what is published there.
  ASSERT_TRUE(eventually([&] {
    return reconnects.load() >= 1 && subscriber.connected() &&
           has_subscribed_client(group, group.replica_port(), "kw-follower");
  }));
  ASSERT_TRUE(eventually([&] {
    promoted.command("PUBLISH", "news", "on-the-new-primary");
    std::lock_guard<std::mutex> guard(messages_mutex);
    return std::find(messages.begin(), messages.end(), "on-the-new-primary") != messages.end();
  }));

  // Give the watchdog a few renewals on the new primary: the lock is still held there, or its
  // loss was reported with a reason.
  std::this_thread::sleep_for(3s);
  if (lost.load() == 0) {
    EXPECT_TRUE(lock.is_held());
    lock.unlock();
  } else {
    EXPECT_NE(lost_reason.load(), -1);
    EXPECT_FALSE(lock.is_held());
  }
}

TEST_P(SentinelTest, TheWatchFallsOverToTheNextSentinel) {
  // Two sentinels: the client listens to the first; once that one is gone it listens to the
  // second, and still follows a failover the second one runs.
  SentinelGroup group(GetParam(), 0, /*sentinels=*/2);
  ClientOptions options = group.options();
  options.client_name = "kw-watched";
  std::atomic<int> switches{0};
  options.sentinel.on_primary_switch = [&](const std::string&, const std::string&) { ++switches; };
  Client client(options);
  ASSERT_EQ(served_port(client), group.primary_port());
  ASSERT_TRUE(eventually([&] {
    return has_subscribed_client(group, group.sentinel_port(0), "kw-watched");
  }));
  group.stop_sentinel(0);
  group.use_sentinel(1);
  ASSERT_TRUE(eventually([&] {
    return has_subscribed_client(group, group.sentinel_port(1), "kw-watched");
  }));
  ASSERT_GE(client.command("WAIT", "1", "10000").integer(), 1);
  ASSERT_TRUE(eventually([&] { return group.knows_the_replica(); }));
  group.failover();
  ASSERT_TRUE(eventually([&] { return switches.load() >= 1; }, 60s));
  client.command("SET", "after-switch", "1");
  EXPECT_EQ(served_port(client), group.replica_port());
}

TEST_P(SentinelTest, ReadsGoToAReplicaWhenAsked) {
  SentinelGroup group(GetParam());
  ASSERT_TRUE(eventually([&] { return group.knows_the_replica(); }));
  ClientOptions options = group.options();
  options.sentinel.read_from = SentinelOptions::ReadFrom::kReplicaPreferred;
  options.client_name = "kw-reader";
  Client client(options);
  client.command("SET", "shared", "v1");  // a write: to the primary
  ASSERT_GE(client.command("WAIT", "1", "10000").integer(), 1);
  EXPECT_EQ(client.command("GET", "shared").str(), "v1");
  // The GET was served by the replica (the last command of our named connection there)...
  EXPECT_TRUE(has_client(group, group.replica_port(), "kw-reader", " cmd=get "));
  // ...and the writes and non-listed commands by the primary.
  EXPECT_EQ(served_port(client), group.primary_port());
  EXPECT_EQ(client.command_on_primary("GET", "shared").str(), "v1");
  EXPECT_TRUE(has_client(group, group.primary_port(), "kw-reader", " cmd=get "));
  EXPECT_EQ(client.command("EXISTS", "shared").integer(), 1);
  // Locks always use the primary, their reads included.
  Lock lock = client.get_lock("lock:reads");
  ASSERT_TRUE(lock.try_lock());
  EXPECT_TRUE(lock.is_held());
  EXPECT_TRUE(lock.is_locked());
  lock.unlock();
  EXPECT_FALSE(lock.is_locked());

  // With the only replica down (and flagged so by the sentinel), reads fall back to the primary.
  group.stop_replica();
  ASSERT_TRUE(eventually([&] { return group.sees_replica_down(group.replica_port()); }, 60s));
  options.client_name = "kw-reader2";
  Client fallback(options);
  EXPECT_EQ(fallback.command("GET", "shared").str(), "v1");
  EXPECT_TRUE(has_client(group, group.primary_port(), "kw-reader2", " cmd=get "));
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

// The lock family through ClientOptions::sentinel on a primary with two replicas.
class SentinelLockSuite : public ::testing::TestWithParam<ServerKind> {
 protected:
  void SetUp() override {
    group_ = std::make_unique<SentinelGroup>(GetParam(), /*extra_replicas=*/1);
    ASSERT_TRUE(eventually([&] { return group_->knows_the_replica(); }));
  }
  ClientOptions options() const {
    ClientOptions o = group_->options();
    o.lock_watchdog_timeout = 3s;
    return o;
  }
  std::unique_ptr<SentinelGroup> group_;
};

TEST_P(SentinelLockSuite, EveryKindWorksThroughTheSentinels) {
  Client a(options());
  Client b(options());
  ASSERT_EQ(served_port(a), group_->primary_port());

  Lock lock_a = a.get_lock("suite:lock");
  Lock lock_b = b.get_lock("suite:lock");
  ASSERT_TRUE(lock_a.try_lock());
  EXPECT_FALSE(lock_b.try_lock());
  lock_a.unlock();
  EXPECT_TRUE(lock_b.try_lock_for(10s));
  lock_b.unlock();

  FairLock fair_a = a.get_fair_lock("suite:fair");
  FairLock fair_b = b.get_fair_lock("suite:fair");
  ASSERT_TRUE(fair_a.try_lock());
  EXPECT_FALSE(fair_b.try_lock());
  fair_a.unlock();
  EXPECT_TRUE(fair_b.try_lock_for(10s));
  fair_b.unlock();

  ReadWriteLock rw_a = a.get_read_write_lock("suite:rw");
  ReadWriteLock rw_b = b.get_read_write_lock("suite:rw");
  Lock read_a = rw_a.read_lock();
  Lock read_b = rw_b.read_lock();
  Lock write_b = rw_b.write_lock();
  ASSERT_TRUE(read_a.try_lock());
  EXPECT_TRUE(read_b.try_lock());
  read_b.unlock();
  EXPECT_FALSE(write_b.try_lock());
  read_a.unlock();
  EXPECT_TRUE(write_b.try_lock_for(10s));
  write_b.unlock();

  FencedLock fenced_a = a.get_fenced_lock("suite:fenced");
  FencedLock fenced_b = b.get_fenced_lock("suite:fenced");
  const std::optional<int64_t> first = fenced_a.try_lock_and_get_token();
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(fenced_b.try_lock_and_get_token().has_value());
  fenced_a.unlock();
  const std::optional<int64_t> second = fenced_b.try_lock_and_get_token(10s);
  ASSERT_TRUE(second.has_value());
  EXPECT_GT(*second, *first);
  fenced_b.unlock();

  Semaphore semaphore_a = a.get_semaphore("suite:semaphore");
  Semaphore semaphore_b = b.get_semaphore("suite:semaphore");
  ASSERT_TRUE(semaphore_a.try_set_permits(2));
  EXPECT_TRUE(semaphore_a.try_acquire());
  EXPECT_TRUE(semaphore_b.try_acquire());
  EXPECT_FALSE(semaphore_b.try_acquire());
  semaphore_a.release();
  EXPECT_TRUE(semaphore_b.try_acquire(10s));
  EXPECT_EQ(semaphore_a.available_permits(), 0);
  semaphore_b.release(2);
  EXPECT_EQ(semaphore_a.available_permits(), 2);
}

TEST_P(SentinelLockSuite, DurableGrantsCountBothReplicas) {
  Client client(options());
  Lock lock = client.get_lock("suite:durable");
  // Both replicas acknowledge the grant, renewals and the release (WAIT 2). The link of a
  // loaded replica may take its time: retried, as the durable lock tests do.
  lock.require_replicas(2, 5s);
  bool granted = false;
  for (int attempt = 0; attempt < 5 && !granted; ++attempt) {
    try {
      granted = lock.try_lock();
    } catch (const NotDurableError& error) {
      EXPECT_LT(error.acknowledged(), 2);
      EXPECT_EQ(error.required(), 2);
      EXPECT_FALSE(lock.is_held());  // a grant short of that is released
    }
  }
  ASSERT_TRUE(granted);
  EXPECT_TRUE(lock.is_held());
  for (int port : group_->replica_ports()) {
    Client replica = group_->direct(port);
    EXPECT_EQ(replica.command("EXISTS", "suite:durable").integer(), 1) << "replica " << port;
  }
  lock.unlock();
  EXPECT_FALSE(lock.is_locked());

  // Three replicas cannot acknowledge: a clear error naming how many did, and no grant.
  Lock greedy = client.get_lock("suite:durable-greedy");
  greedy.require_replicas(3, 300ms);
  try {
    greedy.try_lock();
    FAIL() << "a grant confirmed by three of two replicas";
  } catch (const NotDurableError& error) {
    EXPECT_LE(error.acknowledged(), 2);
    EXPECT_EQ(error.required(), 3);
  }
  EXPECT_FALSE(greedy.is_locked());
}

TEST_P(SentinelLockSuite, AFailoverWithAHolderAndQueuedWaiters) {
  // The default 30 s lease: a lease shorter than the failover (the promoted replica stops
  // hearing renewals from the moment it is promoted, and the client moves only at the switch
  // after it) would run out on the new primary, and a waiter could take the lock there while
  // the holder learns of its loss only at its next renewal.
  ClientOptions holder_options = group_->options();
  std::atomic<int> switches{0};
  holder_options.sentinel.on_primary_switch = [&](const std::string&, const std::string&) {
    ++switches;
  };
  Client holder_client(holder_options);
  const std::string name = "suite:failover";
  Lock holder = holder_client.get_lock(name);
  std::atomic<bool> holder_lost{false};
  holder.on_lost([&](LockLostReason) { holder_lost = true; });
  holder.lock();  // watchdog
  std::atomic<bool> holder_inside{true};

  // Waiters queue up behind the holder, each on a client of its own; "inside" counts the
  // holders in the critical section, which must never exceed one while the first holder has
  // neither released nor heard that it lost the lock.
  constexpr int kWaiters = 3;
  std::atomic<int> inside{0};
  std::atomic<int> violations{0};
  std::atomic<int> acquired{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.emplace_back([&] {
      try {
        Client client(options());
        Lock lock = client.get_lock(name);
        if (!lock.try_lock_for(120s)) return;
        if (holder_inside.load() && !holder_lost.load()) ++violations;
        if (inside.fetch_add(1) != 0) ++violations;
        std::this_thread::sleep_for(50ms);
        inside.fetch_sub(1);
        ++acquired;
        lock.unlock();
      } catch (const Error&) {
        ++errors;  // a wait broken by the failover: reported, never a second grant
      }
    });
  }
  std::this_thread::sleep_for(1s);  // the waiters are queued (their outcome is checked below)
  ASSERT_GE(holder_client.command("WAIT", "2", "10000").integer(), 2);

  group_->failover();
  ASSERT_TRUE(eventually([&] { return switches.load() >= 1; }, 60s));
  ASSERT_TRUE(eventually([&] { return group_->named_port() != group_->primary_port(); }));
  // A few watchdog renewals on the new primary, then the holder lets go if it still holds.
  std::this_thread::sleep_for(3s);
  const bool kept = !holder_lost.load() && holder.is_held();
  holder_inside = false;
  if (kept) holder.unlock();
  for (std::thread& waiter : waiters) waiter.join();

  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(acquired.load() + errors.load(), kWaiters);
  EXPECT_GE(acquired.load(), 1);
  std::printf("[ sentinel ] %s: holder %s; %d of %d waiters got the lock, %d waits failed\n",
              testing::server_name(GetParam()), kept ? "kept its lock" : "heard on_lost",
              acquired.load(), kWaiters, errors.load());
}

INSTANTIATE_TEST_SUITE_P(
    Servers, SentinelLockSuite, ::testing::Values(ServerKind::kKeywarden, ServerKind::kRedis),
    [](const auto& info) { return testing::server_name(info.param); });

INSTANTIATE_TEST_SUITE_P(
    Servers, SentinelTest, ::testing::Values(ServerKind::kKeywarden, ServerKind::kRedis),
    [](const auto& info) { return testing::server_name(info.param); });

}  // namespace
}  // namespace keywarden
