// libkeywarden on a real Redis Cluster: three primaries and three replicas of Debian's
// redis-server on loopback ports, made by `redis-cli --cluster create`, started once for the
// whole binary and always torn down (processes killed and reaped, directory removed). Covers
// routing, MOVED after a slot migration, ASK during one, CROSSSLOT, pipelines over several
// nodes, every lock kind under contention, MultiLock across slots, RedLock over two clusters'
// worth of clients, and a primary failover with a lock held.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "../client/test_servers.h"
#include "common/key_slot.h"
#include "keywarden/keywarden.h"

namespace keywarden {
namespace {

using namespace std::chrono_literals;
using testing::ServerKind;
using testing::ServerProcess;

// Generous, bounded waits: the machine is shared with other builds.
constexpr auto kSettle = std::chrono::seconds(30);

ClientOptions node_options(int port) {
  ClientOptions options;
  options.port = port;
  options.command_timeout = 10s;
  return options;
}

// A text field of CLUSTER INFO / INFO, e.g. "cluster_state".
std::string info_field(const std::string& info, const std::string& field) {
  std::istringstream lines(info);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.starts_with(field + ":")) return line.substr(field.size() + 1);
  }
  return "";
}

bool port_free(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  ::close(fd);
  return ok;
}

// A port for a cluster node: at most 55535, with its bus port (10000 higher) free too.
int cluster_port() {
  static std::mt19937 random(std::random_device{}());
  while (true) {
    int port = 20000 + static_cast<int>(random() % 25000);
    if (port_free(port) && port_free(port + 10000)) return port;
  }
}

class RedisCluster {
 public:
  RedisCluster() {
    char pattern[] = "/tmp/kw-cluster-test-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    try {
      start();
    } catch (...) {
      nodes_.clear();
      std::error_code ignored;
      std::filesystem::remove_all(dir_, ignored);
      throw;
    }
  }

  void start() {
    for (int i = 0; i < 6; ++i) {
      int port = cluster_port();
      std::string node_dir = dir_ + "/" + std::to_string(port);
      std::filesystem::create_directories(node_dir);
      nodes_[port] = std::make_unique<ServerProcess>(
          ServerKind::kRedis,
          std::vector<std::string>{
              "--cluster-enabled", "yes", "--cluster-config-file", node_dir + "/nodes.conf",
              "--dir", node_dir, "--cluster-node-timeout", "3000", "--logfile", node_dir + "/log"},
          port);
      ports_.push_back(port);
    }
    std::string create = "/usr/bin/redis-cli --cluster create";
    for (int port : ports_) create += " 127.0.0.1:" + std::to_string(port);
    create += " --cluster-replicas 1 --cluster-yes > " + dir_ + "/create.log 2>&1";
    if (std::system(create.c_str()) != 0) {
      throw std::runtime_error("redis-cli --cluster create failed (see " + dir_ + "/create.log)");
    }
    wait_until_ok();
  }

  ~RedisCluster() {
    nodes_.clear();  // kills and reaps every node
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  const std::vector<int>& ports() const { return ports_; }

  // kill -9 of one node; it stays down, and wait_until_ok() asks only the others.
  void kill(int port) {
    nodes_.erase(port);
    ports_.erase(std::find(ports_.begin(), ports_.end(), port));
  }

  ClientOptions client_options() const {
    ClientOptions options;
    for (int port : ports_) options.cluster.addresses.emplace_back("127.0.0.1", port);
    options.command_timeout = 10s;
    options.pool_size = 4;
    return options;
  }

  // Every node says cluster_state:ok and agrees on which nodes serve all 16384 slots.
  void wait_until_ok() {
    auto deadline = std::chrono::steady_clock::now() + kSettle;
    std::string last;
    while (std::chrono::steady_clock::now() < deadline) {
      bool ok = true;
      std::set<std::string> maps;
      for (int port : ports_) {
        try {
          Client node(node_options(port));
          std::string info = node.command("CLUSTER", "INFO").str();
          if (info_field(info, "cluster_state") != "ok" ||
              info_field(info, "cluster_slots_ok") != "16384") {
            last = std::to_string(port) + ": " + info;
            ok = false;
            break;
          }
          maps.insert(slots_text(node));
        } catch (const Error& e) {
          last = std::to_string(port) + ": " + e.what();
          ok = false;
          break;
        }
      }
      if (ok && maps.size() == 1) return;
      if (ok) last = "nodes disagree on the slot map";
      std::this_thread::sleep_for(100ms);
    }
    throw std::runtime_error("the cluster did not reach cluster_state:ok; last: " + last);
  }

  // The port of the primary serving `slot`, per the node at ports()[0].
  int owner_port(int slot) {
    Client node(node_options(ports_[0]));
    const Reply slots = node.command("CLUSTER", "SLOTS");
    for (const Reply& range : slots.elements()) {
      if (range.elements()[0].integer() <= slot && slot <= range.elements()[1].integer()) {
        return static_cast<int>(range.elements()[2].elements()[1].integer());
      }
    }
    throw std::runtime_error("slot without owner");
  }

  std::vector<int> primary_ports() {
    std::set<int> out;
    Client node(node_options(ports_[0]));
    const Reply slots = node.command("CLUSTER", "SLOTS");
    for (const Reply& range : slots.elements()) {
      out.insert(static_cast<int>(range.elements()[2].elements()[1].integer()));
    }
    return {out.begin(), out.end()};
  }

  static std::string node_id(int port) {
    return Client(node_options(port)).command("CLUSTER", "MYID").str();
  }

  // Moves `slot` (and its keys) from its owner to `target`, as redis-cli --cluster reshard does.
  void move_slot(int slot, int target) {
    int source = owner_port(slot);
    if (source == target) return;
    const std::string source_id = node_id(source), target_id = node_id(target);
    Client from(node_options(source)), to(node_options(target));
    to.command("CLUSTER", "SETSLOT", slot, "IMPORTING", source_id);
    from.command("CLUSTER", "SETSLOT", slot, "MIGRATING", target_id);
    migrate_keys(slot, source, target);
    assign_slot(slot, target);
  }

  // CLUSTER SETSLOT slot NODE on the new owner first, then the old one, then the rest (the
  // order redis-cli uses, so that no two nodes each redirect to the other).
  void assign_slot(int slot, int target) {
    const std::string target_id = node_id(target);
    std::vector<int> order{target};
    for (int port : primary_ports()) {
      if (port != target) order.push_back(port);
    }
    for (int port : order) {
      Client(node_options(port)).command("CLUSTER", "SETSLOT", slot, "NODE", target_id);
    }
  }

  static void migrate_keys(int slot, int source, int target) {
    Client from(node_options(source));
    while (true) {
      Reply keys = from.command("CLUSTER", "GETKEYSINSLOT", slot, 100);
      if (keys.elements().empty()) return;
      std::vector<std::string> args{"MIGRATE", "127.0.0.1", std::to_string(target), "", "0",
                                    "5000",    "KEYS"};
      for (const Reply& key : keys.elements()) args.push_back(key.str());
      from.command(args);
    }
  }

 private:
  static std::string slots_text(Client& node) {
    std::string out;
    const Reply slots = node.command("CLUSTER", "SLOTS");
    for (const Reply& range : slots.elements()) {
      out += std::to_string(range.elements()[0].integer()) + "-" +
             std::to_string(range.elements()[1].integer()) + "@" +
             std::to_string(range.elements()[2].elements()[1].integer()) + " ";
    }
    std::vector<std::string> parts;
    std::istringstream split(out);
    for (std::string part; split >> part;) parts.push_back(part);
    std::sort(parts.begin(), parts.end());
    std::string sorted;
    for (auto& part : parts) sorted += part + " ";
    return sorted;
  }

  std::string dir_;
  std::map<int, std::unique_ptr<ServerProcess>> nodes_;
  std::vector<int> ports_;
};

RedisCluster* cluster = nullptr;

class ClusterEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { cluster = new RedisCluster(); }
  void TearDown() override {
    delete cluster;
    cluster = nullptr;
  }
};

const ::testing::Environment* const environment =
    ::testing::AddGlobalTestEnvironment(new ClusterEnvironment);

// A key of `prefix` whose slot the primary at `port` serves.
std::string key_on(int port, const std::string& prefix) {
  for (int i = 0;; ++i) {
    std::string key = prefix + std::to_string(i);
    if (cluster->owner_port(key_slot(key)) == port) return key;
  }
}

int other_primary(int port) {
  for (int candidate : cluster->primary_ports()) {
    if (candidate != port) return candidate;
  }
  throw std::runtime_error("one primary only");
}

TEST(ClusterTest, CommandsGoToTheOwnerOfTheirSlot) {
  Client client(cluster->client_options());
  for (int i = 0; i < 200; ++i) client.command("SET", "route:" + std::to_string(i), i);
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(client.command("GET", "route:" + std::to_string(i)).str(), std::to_string(i));
  }
  // Every key sits on the primary that owns its slot, and every primary got some.
  for (int port : cluster->primary_ports()) {
    Client node(node_options(port));
    EXPECT_GT(node.command("DBSIZE").integer(), 0) << port;
  }
  for (int i = 0; i < 200; i += 37) {
    const std::string key = "route:" + std::to_string(i);
    Client owner(node_options(cluster->owner_port(key_slot(key))));
    EXPECT_EQ(owner.command("GET", key).str(), std::to_string(i));
  }
  EXPECT_EQ(client.command("PING").str(), "PONG");
}

TEST(ClusterTest, CrossSlotIsAClearError) {
  Client client(cluster->client_options());
  try {
    client.command("MSET", "cross:a", "1", "cross:b", "2");
    FAIL() << "MSET across slots succeeded";
  } catch (const ClusterError& e) {
    EXPECT_EQ(e.code(), "CROSSSLOT");
    EXPECT_NE(std::string(e.what()).find("CROSSSLOT Keys in request don't hash to the same slot"),
              std::string::npos);
    EXPECT_NE(std::string(e.what()).find("{hash tag}"), std::string::npos);
  }
  client.command("MSET", "{cross}:a", "1", "{cross}:b", "2");
  Reply both = client.command("MGET", "{cross}:a", "{cross}:b");
  EXPECT_EQ(both.elements()[0].str(), "1");
  EXPECT_EQ(both.elements()[1].str(), "2");
  // A transaction stays on one node: with one tag it runs, across slots it is a clear error.
  auto replies = client.transaction([](Pipeline& p) {
    p.add("INCR", "{tx}:a");
    p.add("INCR", "{tx}:b");
  });
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[1].integer(), 1);
  EXPECT_THROW(client.transaction([](Pipeline& p) {
    p.add("INCR", "tx:a");
    p.add("INCR", "tx:b");
  }),
               ClusterError);
  // A script's keys must share a slot too.
  Script script("return redis.call('MSET', KEYS[1], '1', KEYS[2], '2')");
  EXPECT_THROW(client.eval_sha(script, {"cross:x", "cross:y"}), ClusterError);
  EXPECT_EQ(client.eval_sha(script, {"{s}:x", "{s}:y"}).str(), "OK");
}

TEST(ClusterTest, PipelineSplitsPerNodeAndKeepsOrder) {
  Client client(cluster->client_options());
  auto pipeline = client.pipeline();
  for (int i = 0; i < 300; ++i) pipeline.add("SET", "pipe:" + std::to_string(i), i * 2);
  pipeline.add("PING");
  for (int i = 0; i < 300; ++i) pipeline.add("GET", "pipe:" + std::to_string(i));
  pipeline.add("INCR", "pipe:0");
  auto replies = pipeline.exec();
  ASSERT_EQ(replies.size(), 602u);
  for (int i = 0; i < 300; ++i) EXPECT_EQ(replies[i].str(), "OK");
  EXPECT_EQ(replies[300].str(), "PONG");
  for (int i = 0; i < 300; ++i) EXPECT_EQ(replies[301 + i].str(), std::to_string(i * 2));
  EXPECT_EQ(replies[601].integer(), 1);
  // An error reply stays in its place.
  auto mixed = client.pipeline();
  mixed.add("SET", "pipe:str", "x").add("INCR", "pipe:str").add("GET", "pipe:7");
  auto answers = mixed.exec();
  EXPECT_EQ(answers[0].str(), "OK");
  EXPECT_TRUE(answers[1].is_error());
  EXPECT_EQ(answers[2].str(), "14");
}

TEST(ClusterTest, MovedAfterASlotMigration) {
  Client client(cluster->client_options());
  const std::string key = "moving:key";
  const int slot = key_slot(key);
  client.command("SET", key, "before");
  auto pipeline = client.pipeline();
  for (int i = 0; i < 20; ++i) pipeline.add("SET", "{moving:key}:" + std::to_string(i), i);
  pipeline.exec();
  const int source = cluster->owner_port(slot);
  int target = 0;
  for (int port : cluster->primary_ports()) {
    if (port != source) target = port;
  }
  cluster->move_slot(slot, target);
  // The old owner now redirects...
  Client old_owner(node_options(source));
  try {
    old_owner.command("GET", key);
    FAIL() << "the old owner still served the key";
  } catch (const ServerError& e) {
    EXPECT_EQ(e.code(), "MOVED");
  }
  // ...and the client, whose map still names it, follows.
  EXPECT_EQ(client.command("GET", key).str(), "before");
  client.command("SET", key, "after");
  EXPECT_EQ(Client(node_options(target)).command("GET", key).str(), "after");
  auto again = client.pipeline();
  for (int i = 0; i < 20; ++i) again.add("GET", "{moving:key}:" + std::to_string(i));
  auto values = again.exec();
  for (int i = 0; i < 20; ++i) EXPECT_EQ(values[i].str(), std::to_string(i));
  // Move it back, under a second client's traffic.
  Client busy(cluster->client_options());
  busy.command("DEL", "{moving:key}:counter");
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0}, done{0};
  std::thread traffic([&] {
    while (!stop) {
      try {
        busy.command("INCR", "{moving:key}:counter");
        ++done;
      } catch (const Error&) {
        ++errors;
      }
    }
  });
  std::this_thread::sleep_for(100ms);
  cluster->move_slot(slot, source);
  std::this_thread::sleep_for(200ms);
  stop = true;
  traffic.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(client.command("GET", "{moving:key}:counter").str(), std::to_string(done.load()));
}

TEST(ClusterTest, AskDuringAMigration) {
  Client client(cluster->client_options());
  const std::string moved = "asking:moved", stays = "{asking:moved}:stays";
  const int slot = key_slot(moved);
  ASSERT_EQ(slot, key_slot(stays));
  client.command("DEL", "{asking:moved}:new");  // idempotent under --gtest_repeat
  client.command("SET", moved, "m");
  client.command("SET", stays, "s");
  const int source = cluster->owner_port(slot);
  int target = 0;
  for (int port : cluster->primary_ports()) {
    if (port != source) target = port;
  }
  const std::string source_id = RedisCluster::node_id(source);
  const std::string target_id = RedisCluster::node_id(target);
  Client from(node_options(source)), to(node_options(target));
  to.command("CLUSTER", "SETSLOT", slot, "IMPORTING", source_id);
  from.command("CLUSTER", "SETSLOT", slot, "MIGRATING", target_id);
  from.command("MIGRATE", "127.0.0.1", target, moved, 0, 5000);
  // The source answers ASK for the key it no longer has.
  try {
    from.command("GET", moved);
    FAIL() << "no ASK";
  } catch (const ServerError& e) {
    EXPECT_EQ(e.code(), "ASK");
  }
  EXPECT_EQ(client.command("GET", moved).str(), "m");  // ASKING on the target
  EXPECT_EQ(client.command("GET", stays).str(), "s");  // still on the source
  // A new key of the migrating slot is created on the target.
  client.command("SET", "{asking:moved}:new", "n");
  auto asking = to.pipeline();
  asking.add("ASKING").add("EXISTS", "{asking:moved}:new");
  EXPECT_EQ(asking.exec()[1].integer(), 1);
  // Finish: move the rest and hand the slot over.
  RedisCluster::migrate_keys(slot, source, target);
  cluster->assign_slot(slot, target);
  EXPECT_EQ(client.command("GET", "{asking:moved}:new").str(), "n");
  EXPECT_EQ(client.command("GET", stays).str(), "s");
  EXPECT_EQ(to.command("GET", stays).str(), "s");
}

// Runs `body` in `threads` threads, `rounds` times each, and checks that no two were inside
// at once.
template <typename Acquire, typename Release>
void contend(int threads, int rounds, Acquire acquire, Release release) {
  std::atomic<int> inside{0}, overlaps{0}, total{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int r = 0; r < rounds; ++r) {
        acquire(t);
        if (inside.fetch_add(1) != 0) ++overlaps;
        std::this_thread::sleep_for(1ms);
        inside.fetch_sub(1);
        ++total;
        release(t);
      }
    });
  }
  for (auto& worker : workers) worker.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(total.load(), threads * rounds);
}

constexpr int kThreads = 4, kRounds = 15;

TEST(ClusterLocks, Lock) {
  Client client(cluster->client_options());
  std::vector<Lock> locks;
  for (int t = 0; t < kThreads; ++t) locks.push_back(client.get_lock("cl:lock"));
  contend(
      kThreads, kRounds, [&](int t) { locks[t].lock(); }, [&](int t) { locks[t].unlock(); });
  // Reentrancy and the watchdog's renewal go to the owner as well.
  locks[0].lock();
  locks[0].lock();
  EXPECT_EQ(client.command("HGETALL", "cl:lock").elements().size(), 2u);
  locks[0].unlock();
  locks[0].unlock();
  EXPECT_FALSE(locks[0].is_locked());
}

TEST(ClusterLocks, LockWithATaggedName) {
  Client client(cluster->client_options());
  std::vector<Lock> locks;
  for (int t = 0; t < kThreads; ++t) locks.push_back(client.get_lock("app:{order-7}:lock"));
  contend(
      kThreads, kRounds, [&](int t) { locks[t].lock(); }, [&](int t) { locks[t].unlock(); });
}

TEST(ClusterLocks, FairLock) {
  Client client(cluster->client_options());
  std::vector<FairLock> locks;
  for (int t = 0; t < kThreads; ++t) locks.push_back(client.get_fair_lock("cl:fair"));
  contend(
      kThreads, kRounds, [&](int t) { locks[t].lock(); }, [&](int t) { locks[t].unlock(); });
}

TEST(ClusterLocks, FencedLockTokensGrow) {
  Client client(cluster->client_options());
  std::vector<FencedLock> locks;
  for (int t = 0; t < kThreads; ++t) locks.push_back(client.get_fenced_lock("cl:fenced"));
  std::mutex mutex;
  int64_t last = 0;
  bool increasing = true;
  contend(
      kThreads, kRounds,
      [&](int t) {
        int64_t token = locks[t].lock_and_get_token();
        std::lock_guard guard(mutex);
        if (token <= last) increasing = false;
        last = token;
      },
      [&](int t) { locks[t].unlock(); });
  EXPECT_TRUE(increasing);
}

TEST(ClusterLocks, ReadWriteLock) {
  Client client(cluster->client_options());
  std::vector<ReadWriteLock> rw;
  for (int t = 0; t < kThreads; ++t) rw.push_back(client.get_read_write_lock("cl:rw"));
  std::vector<Lock> writers;
  for (auto& lock : rw) writers.push_back(lock.write_lock());
  contend(
      kThreads, kRounds, [&](int t) { writers[t].lock(); }, [&](int t) { writers[t].unlock(); });
  // Readers share; a writer waits for them.
  Lock reader_a = rw[0].read_lock(), reader_b = rw[1].read_lock();
  reader_a.lock();
  reader_b.lock();
  EXPECT_FALSE(writers[2].try_lock());
  reader_a.unlock();
  reader_b.unlock();
  EXPECT_TRUE(writers[2].try_lock_for(5s));
  writers[2].unlock();
}

TEST(ClusterLocks, Semaphore) {
  Client client(cluster->client_options());
  std::vector<Semaphore> semaphores;
  for (int t = 0; t < kThreads; ++t) semaphores.push_back(client.get_semaphore("cl:sem"));
  semaphores[0].try_set_permits(1);
  contend(
      kThreads, kRounds, [&](int t) { semaphores[t].acquire(); },
      [&](int t) { semaphores[t].release(); });
  EXPECT_EQ(semaphores[0].available_permits(), 1);
}

TEST(ClusterLocks, PermitExpirableSemaphore) {
  Client client(cluster->client_options());
  std::vector<PermitExpirableSemaphore> semaphores;
  for (int t = 0; t < kThreads; ++t) {
    semaphores.push_back(client.get_permit_expirable_semaphore("cl:psem"));
  }
  semaphores[0].try_set_permits(1);
  std::vector<std::string> ids(kThreads);
  contend(
      kThreads, kRounds, [&](int t) { ids[t] = semaphores[t].acquire(); },
      [&](int t) { semaphores[t].release(ids[t]); });
  EXPECT_EQ(semaphores[0].available_permits(), 1);
}

TEST(ClusterLocks, CountDownLatch) {
  Client client(cluster->client_options());
  for (const std::string name : {"cl:latch", "app:{latch-tag}:x"}) {
    CountDownLatch latch = client.get_count_down_latch(name);
    ASSERT_TRUE(latch.try_set_count(kThreads));
    std::atomic<int> passed{0};
    std::vector<std::thread> waiters;
    for (int t = 0; t < 2; ++t) {
      waiters.emplace_back([&] {
        CountDownLatch mine = client.get_count_down_latch(name);
        if (mine.await(20s)) ++passed;
      });
    }
    std::vector<std::thread> counters;
    for (int t = 0; t < kThreads; ++t) {
      counters.emplace_back([&] { client.get_count_down_latch(name).count_down(); });
    }
    for (auto& thread : counters) thread.join();
    for (auto& thread : waiters) thread.join();
    EXPECT_EQ(passed.load(), 2) << name;
    EXPECT_EQ(latch.get_count(), 0);
  }
}

TEST(ClusterLocks, MultiLockAcrossSlots) {
  Client client(cluster->client_options());
  // Names on every primary.
  std::vector<std::string> names;
  for (int port : cluster->primary_ports()) names.push_back(key_on(port, "cl:multi:"));
  std::set<int> slots;
  for (const auto& name : names) slots.insert(key_slot(name));
  ASSERT_EQ(slots.size(), 3u);
  std::vector<MultiLock> locks;
  for (int t = 0; t < kThreads; ++t) locks.push_back(client.get_multi_lock(names));
  contend(
      kThreads, 8, [&](int t) { locks[t].lock(); }, [&](int t) { locks[t].unlock(); });
  // One member held elsewhere keeps the whole MultiLock out, and leaves nothing behind.
  Lock member = client.get_lock(names[1]);
  member.lock();
  EXPECT_FALSE(locks[0].try_lock_for(300ms));
  Lock first = client.get_lock(names[0]);
  EXPECT_FALSE(first.is_locked());
  member.unlock();
  EXPECT_TRUE(locks[0].try_lock_for(5s));
  locks[0].unlock();
}

TEST(ClusterLocks, RedLockOverAClusterAndStandaloneServers) {
  // Three independent deployments: the cluster and two standalone servers; a quorum of 2.
  ServerProcess second(ServerKind::kRedis), third(ServerKind::kRedis);
  Client a(cluster->client_options()), b(node_options(second.port())),
      c(node_options(third.port()));
  RedLock one({&a, &b, &c}, "cl:red"), two({&a, &b, &c}, "cl:red");
  one.lock();
  EXPECT_TRUE(a.command("EXISTS", "cl:red").integer() == 1);
  EXPECT_TRUE(b.command("EXISTS", "cl:red").integer() == 1);
  EXPECT_FALSE(two.try_lock());
  one.unlock();
  EXPECT_TRUE(two.try_lock_for(5s));
  two.unlock();
  // Under contention.
  std::vector<RedLock> locks;
  for (int t = 0; t < kThreads; ++t)
    locks.emplace_back(std::vector<Client*>{&a, &b, &c}, "cl:red2");
  contend(
      kThreads, 5, [&](int t) { locks[t].lock(); }, [&](int t) { locks[t].unlock(); });
  // With the cluster's side unreachable for this name (another owner holds it there), the
  // two standalone servers still make a quorum.
  Lock squatter = a.get_lock("cl:red3");
  squatter.lock();
  RedLock quorum({&a, &b, &c}, "cl:red3");
  EXPECT_TRUE(quorum.try_lock_for(5s));
  quorum.unlock();
  squatter.unlock();
}

TEST(ClusterLocks, ContentionWhileTheSlotMigrates) {
  // Holders and waiters keep going while the lock's slot moves to another primary and back:
  // their scripts follow ASK (ASKING before each command, SCRIPT LOAD included), TRYAGAIN and
  // MOVED. Never two holders, no error.
  Client client(cluster->client_options());
  const std::string name = "cl:migrating";
  const int slot = key_slot(name);
  const int source = cluster->owner_port(slot);
  int target = 0;
  for (int port : cluster->primary_ports()) {
    if (port != source) target = port;
  }
  std::vector<Lock> locks;
  std::vector<FairLock> fair;
  for (int t = 0; t < kThreads; ++t) {
    locks.push_back(client.get_lock(name));
    fair.push_back(client.get_fair_lock("{cl:migrating}:fair"));
  }
  std::atomic<bool> stop{false};
  std::atomic<int> inside{0}, fair_inside{0}, overlaps{0}, errors{0}, rounds{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      while (!stop) {
        try {
          Lock& lock = locks[t];
          lock.lock();
          if (inside.fetch_add(1) != 0) ++overlaps;
          std::this_thread::sleep_for(2ms);
          inside.fetch_sub(1);
          lock.unlock();
          fair[t].lock();
          if (fair_inside.fetch_add(1) != 0) ++overlaps;
          std::this_thread::sleep_for(2ms);
          fair_inside.fetch_sub(1);
          fair[t].unlock();
          ++rounds;
        } catch (const std::exception& e) {
          ++errors;
          ADD_FAILURE() << e.what();
          return;
        }
      }
    });
  }
  std::this_thread::sleep_for(200ms);
  cluster->move_slot(slot, target);
  std::this_thread::sleep_for(300ms);
  cluster->move_slot(slot, source);
  std::this_thread::sleep_for(300ms);
  stop = true;
  for (auto& worker : workers) worker.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(errors.load(), 0);
  EXPECT_GT(rounds.load(), kThreads);
  EXPECT_EQ(cluster->owner_port(slot), source);
}

// `redis-cli --cluster reshard` moving `slots` slots (the lowest `from` serves) to `to`.
void reshard(int from, int to, int slots, const std::string& log) {
  std::string command = "/usr/bin/redis-cli --cluster reshard 127.0.0.1:" + std::to_string(from) +
                        " --cluster-from " + RedisCluster::node_id(from) + " --cluster-to " +
                        RedisCluster::node_id(to) + " --cluster-slots " + std::to_string(slots) +
                        " --cluster-yes > " + log + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << "see " << log;
}

TEST(ClusterLocks, LostUpdatesUnderRedisCliReshard) {
  // Threads take locks whose slots `redis-cli --cluster reshard` moves to another primary and
  // back while they run, and under each lock read-modify-write a counter of the same slot
  // (GET then SET: an overlap would lose an update). Every lock operation follows the ASK and
  // MOVED the migration causes, and no update is lost.
  cluster->wait_until_ok();  // redis-cli refuses a cluster whose nodes disagree
  const int source = cluster->owner_port(0);
  const int target = other_primary(source);
  constexpr int kMoved = 40;  // slots 0..39: the source's lowest, then the target's lowest
  std::vector<std::string> names;
  for (int i = 0; names.size() < 3; ++i) {
    std::string name = "rs:lock:" + std::to_string(i);
    if (key_slot(name) < kMoved) names.push_back(name);
  }
  // Each release leaves a Redisson unlock latch key for twice the command timeout, and
  // redis-cli migrates every one of them: a shorter timeout and a pause between rounds keep
  // the slots small.
  ClientOptions options = cluster->client_options();
  options.command_timeout = 4s;
  Client client(options);
  for (const auto& name : names) client.command("SET", "{" + name + "}:counter", 0);
  std::vector<std::atomic<int>> done(names.size());
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0};
  std::vector<std::thread> workers;
  constexpr int kWorkers = 6;
  for (int t = 0; t < kWorkers; ++t) {
    workers.emplace_back([&, t] {
      const size_t which = static_cast<size_t>(t) % names.size();
      const std::string counter = "{" + names[which] + "}:counter";
      // One kind per name (a FairLock's release wakes only fair waiters). Lock has no
      // virtual destructor: each kind is kept as itself and used through a Lock*.
      std::optional<Lock> plain;
      std::optional<FairLock> fair;
      Lock* lock;
      if (which != 1) {
        lock = &plain.emplace(client.get_lock(names[which]));
      } else {
        lock = &fair.emplace(client.get_fair_lock(names[which]));
      }
      while (!stop) {
        try {
          lock->lock();
          int64_t value = std::stoll(client.command("GET", counter).str());
          client.command("SET", counter, value + 1);
          lock->unlock();
          ++done[which];
          std::this_thread::sleep_for(3ms);
        } catch (const std::exception& e) {
          ++errors;
          ADD_FAILURE() << e.what();
          return;
        }
      }
    });
  }
  const std::string log_dir = ::testing::TempDir();
  std::this_thread::sleep_for(200ms);
  reshard(source, target, kMoved, log_dir + "kw-reshard-out.log");
  for (const auto& name : names) EXPECT_EQ(cluster->owner_port(key_slot(name)), target);
  int during = 0;
  for (auto& count : done) during += count;
  std::this_thread::sleep_for(200ms);
  reshard(target, source, kMoved, log_dir + "kw-reshard-back.log");
  std::this_thread::sleep_for(200ms);
  stop = true;
  for (auto& worker : workers) worker.join();
  EXPECT_EQ(errors.load(), 0);
  for (const auto& name : names) EXPECT_EQ(cluster->owner_port(key_slot(name)), source);
  int total = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    const int64_t counted = std::stoll(client.command("GET", "{" + names[i] + "}:counter").str());
    EXPECT_EQ(counted, done[i].load()) << names[i] << ": " << done[i] - counted << " lost updates";
    total += done[i];
  }
  EXPECT_GT(total, during);  // work went on after the first reshard too
  cluster->wait_until_ok();
}

TEST(ClusterLocks, WatchdogRenewsLocksInManySlots) {
  ClientOptions options = cluster->client_options();
  options.lock_watchdog_timeout = 1500ms;
  Client client(options);
  std::vector<Lock> locks;
  for (int i = 0; i < 12; ++i) locks.push_back(client.get_lock("cl:dog:" + std::to_string(i)));
  // Every kind's renewal script, in several slots (the read lock's script also touches the
  // keys it derives from the name).
  for (int i = 0; i < 3; ++i) {
    const std::string suffix = std::to_string(i);
    locks.push_back(client.get_fair_lock("cl:dog:fair:" + suffix));
    locks.push_back(client.get_fenced_lock("cl:dog:fenced:" + suffix));
    locks.push_back(client.get_read_write_lock("cl:dog:rw:" + suffix).read_lock());
    locks.push_back(client.get_read_write_lock("cl:dog:rww:" + suffix).write_lock());
  }
  std::atomic<int> lost{0};
  for (auto& lock : locks) {
    lock.on_lost([&](LockLostReason) { ++lost; });
    lock.lock();
  }
  std::this_thread::sleep_for(3500ms);  // past two leases: only renewals keep them
  EXPECT_EQ(lost.load(), 0);
  for (auto& lock : locks) {
    EXPECT_TRUE(lock.is_held());
    EXPECT_GT(client.command("PTTL", lock.name()).integer(), 0);
    lock.unlock();
  }
}

// Collects the messages a Subscriber hands over, for waits that end on arrival (bounded).
class Inbox {
 public:
  MessageHandler handler() {
    return [this](const Message& message) {
      std::lock_guard guard(mutex_);
      received_[message.channel].push_back(message.payload);
      cv_.notify_all();
    };
  }
  bool wait_for(const std::string& channel, const std::string& payload,
                std::chrono::seconds limit = 20s) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, limit, [&] {
      const auto& got = received_[channel];
      return std::find(got.begin(), got.end(), payload) != got.end();
    });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::string, std::vector<std::string>> received_;
};

// SPUBLISH until the message arrives: a relocated subscription is placed asynchronously, so
// the first publishes may find no subscriber on the new owner.
bool spublish_until_received(Client& client, Inbox& inbox, const std::string& channel,
                             const std::string& payload) {
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (client.command("SPUBLISH", channel, payload).integer() > 0 &&
        inbox.wait_for(channel, payload, 5s)) {
      return true;
    }
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

TEST(ClusterPubSub, ShardChannelsGoToTheirOwnersAndFollowTheSlot) {
  Client client(cluster->client_options());
  Inbox inbox;
  std::atomic<int> reconnects{0};
  Subscriber subscriber(cluster->client_options());
  subscriber.on_reconnect([&] { ++reconnects; });
  // A shard channel on every primary: each SSUBSCRIBE reaches the node owning its slot, which
  // is the only one whose SPUBLISH delivers it.
  std::vector<std::string> channels;
  for (int port : cluster->primary_ports()) {
    channels.push_back(key_on(port, "shard:chan:"));
    subscriber.ssubscribe(channels.back(), inbox.handler());
  }
  EXPECT_TRUE(subscriber.connected());
  for (const auto& channel : channels) {
    const int owner = cluster->owner_port(key_slot(channel));
    Client node(node_options(owner));
    EXPECT_EQ(node.command("PUBSUB", "SHARDNUMSUB", channel).elements()[1].integer(), 1)
        << channel;
    EXPECT_EQ(client.command("SPUBLISH", channel, "hello").integer(), 1) << channel;
    EXPECT_TRUE(inbox.wait_for(channel, "hello")) << channel;
  }
  // Classic pub/sub on one node: a PUBLISH on any other node reaches it.
  subscriber.subscribe("classic:chan", inbox.handler());
  subscriber.psubscribe("classic:pat:*", inbox.handler());
  for (int port : cluster->primary_ports()) {
    Client node(node_options(port));
    const std::string payload = "from " + std::to_string(port);
    node.command("PUBLISH", "classic:chan", payload);
    node.command("PUBLISH", "classic:pat:x", payload);
    EXPECT_TRUE(inbox.wait_for("classic:chan", payload)) << port;
    EXPECT_TRUE(inbox.wait_for("classic:pat:x", payload)) << port;
  }

  // The slot of a subscribed channel moves: the old owner drops the subscription
  // (`sunsubscribe`), and the subscriber places it on the new owner.
  const std::string moving = channels[0];
  const int slot = key_slot(moving);
  const int source = cluster->owner_port(slot);
  const int target = other_primary(source);
  cluster->move_slot(slot, target);
  EXPECT_TRUE(spublish_until_received(client, inbox, moving, "after the move"));
  EXPECT_EQ(Client(node_options(target))
                .command("PUBSUB", "SHARDNUMSUB", moving)
                .elements()[1]
                .integer(),
            1);
  // Messages published during the move may be lost, and on_reconnect says so (right after the
  // subscription is placed, so possibly after the message above arrived).
  for (int i = 0; i < 200 && reconnects.load() == 0; ++i) std::this_thread::sleep_for(50ms);
  EXPECT_GE(reconnects.load(), 1);

  // A channel whose slot moved after the subscriber learned the map: its SSUBSCRIBE goes to
  // the old owner, which answers -MOVED, and the subscription goes where that says.
  Subscriber stale(cluster->client_options());
  stale.ssubscribe(channels[2], inbox.handler());  // learns the map
  const std::string late = channels[1];
  const int late_slot = key_slot(late);
  const int late_source = cluster->owner_port(late_slot);
  cluster->move_slot(late_slot, other_primary(late_source));
  const std::string fresh = "{" + late + "}:fresh";
  stale.ssubscribe(fresh, inbox.handler());
  EXPECT_TRUE(spublish_until_received(client, inbox, fresh, "moved first"));
  // (and the first subscriber's channel in that slot followed it)
  EXPECT_TRUE(spublish_until_received(client, inbox, late, "followed too"));

  // Unsubscribed, a channel gets nothing more, wherever it lives.
  subscriber.sunsubscribe(moving);
  EXPECT_EQ(client.command("SPUBLISH", moving, "gone").integer(), 0);
  cluster->move_slot(slot, source);
  cluster->move_slot(late_slot, late_source);
  EXPECT_TRUE(spublish_until_received(client, inbox, late, "back home"));
}

// Last: the failover changes which node is primary.
TEST(ClusterZFailover, LockSurvivesAManualFailover) {
  Client client(cluster->client_options());
  const std::string name = "cl:failover";
  Lock holder = client.get_lock(name);
  std::atomic<int> lost{0};
  holder.on_lost([&](LockLostReason) { ++lost; });
  holder.lock();
  client.command("SET", "{cl:failover}:data", "kept");
  const int primary = cluster->owner_port(key_slot(name));
  // Its replica takes over (a manual failover: the replica catches up first, so no write is
  // lost), while waiters queue up.
  int replica = 0;
  const std::string primary_id = RedisCluster::node_id(primary);
  for (int port : cluster->ports()) {
    if (port == primary) continue;
    Client node(node_options(port));
    std::string info = node.command("INFO", "replication").str();
    if (info_field(info, "role") == "slave" &&
        info_field(info, "master_port") == std::to_string(primary)) {
      replica = port;
    }
  }
  ASSERT_NE(replica, 0);
  std::atomic<int> acquired{0};
  std::vector<std::thread> waiters;
  for (int t = 0; t < 3; ++t) {
    waiters.emplace_back([&] {
      Lock waiter = client.get_lock(name);
      if (waiter.try_lock_for(40s)) {
        ++acquired;
        waiter.unlock();
      }
    });
  }
  Client(node_options(replica)).command("CLUSTER", "FAILOVER");
  auto deadline = std::chrono::steady_clock::now() + kSettle;
  while (cluster->owner_port(key_slot(name)) != replica) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "no failover";
    std::this_thread::sleep_for(100ms);
  }
  cluster->wait_until_ok();
  // The client follows the new primary (MOVED from the demoted one), the hold is still there.
  EXPECT_EQ(client.command("GET", "{cl:failover}:data").str(), "kept");
  if (lost.load() == 0) {
    EXPECT_TRUE(holder.is_held());
    holder.unlock();
  } else {
    holder.unlock();  // acknowledges the loss, must not throw
  }
  for (auto& waiter : waiters) waiter.join();
  EXPECT_EQ(acquired.load(), 3);
  // And new work goes to the new primary.
  Lock after = client.get_lock(name);
  EXPECT_TRUE(after.try_lock_for(5s));
  EXPECT_EQ(Client(node_options(replica)).command("EXISTS", name).integer(), 1);
  after.unlock();
}

// Last of all: a primary killed for good; its replica takes over by election.
TEST(ClusterZFailover, ClientFollowsAKilledPrimarysReplica) {
  ClientOptions options = cluster->client_options();
  options.cluster.max_redirects = 30;  // up to ~25 s of retries: election after node timeout
  Client client(options);
  const std::string key = "cl:killed";
  const int slot = key_slot(key);
  // SET and WAIT share one connection (a batch with WAIT is never split), so WAIT counts the
  // replica that has the SET.
  auto replicated = client.pipeline();
  replicated.add("SET", key, "v1").add("WAIT", 1, 5000);
  EXPECT_EQ(replicated.exec()[1].integer(), 1);
  // A shard channel of the slot: its subscription follows the promoted replica.
  Inbox inbox;
  Subscriber subscriber(options);
  subscriber.ssubscribe("{cl:killed}:channel", inbox.handler());
  Lock holder = client.get_lock("{cl:killed}:lock");
  holder.require_replicas(1, 2000ms);  // the grant is on the replica before lock() returns
  std::atomic<int> lost{0};
  holder.on_lost([&](LockLostReason) { ++lost; });
  holder.lock();
  const int primary = cluster->owner_port(slot);
  cluster->kill(primary);
  // The first command after the kill finds the node refusing connections, refreshes the map
  // until the promoted replica owns the slot, and runs there: no error reaches the caller.
  EXPECT_EQ(client.command("GET", key).str(), "v1");
  client.command("SET", key, "v2");
  EXPECT_EQ(client.command("GET", key).str(), "v2");
  // The lock was replicated before the kill (WAIT 1): the holder keeps it and releases it.
  cluster->wait_until_ok();
  EXPECT_NE(cluster->owner_port(slot), primary);
  EXPECT_EQ(lost.load(), 0);
  EXPECT_TRUE(holder.is_held());
  holder.unlock();
  Lock next = client.get_lock("{cl:killed}:lock");
  EXPECT_TRUE(next.try_lock_for(5s));
  next.unlock();
  EXPECT_TRUE(spublish_until_received(client, inbox, "{cl:killed}:channel", "after the kill"));
}

}  // namespace
}  // namespace keywarden
