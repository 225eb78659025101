// Durable grants (Lock::require_replicas, ClientOptions::lock_durable_replicas) on a primary
// with one replica, both keywarden or both stock redis-server: a grant the replica confirmed is
// on the replica when lock() returns; a grant short of the required replicas is undone and
// throws NotDurableError saying how many confirmed; a frozen replica makes renewals count as
// failed (the hold is lost, on_lost says why) and a release go to on_error.
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <thread>

#include "keywarden/keywarden.h"
#include "lock_test_support.h"
#include "test_servers.h"

namespace keywarden {
namespace {

using namespace std::chrono_literals;
using testing::ServerKind;
using testing::ServerProcess;
using Clock = std::chrono::steady_clock;

// The pair, and a wait until the replica acknowledges writes (its initial sync is done).
class Pair : public testing::ReplicatedPair {
 public:
  using ReplicatedPair::ReplicatedPair;
  bool replica_online() {
    Client client(options(primary()));
    const Clock::time_point until = Clock::now() + 20s;
    while (Clock::now() < until) {
      client.command("SET", "durable:probe", "1");
      if (client.command("WAIT", 1, 200).integer() == 1) return true;
    }
    return false;
  }
  static ClientOptions options(ServerProcess& server) {
    ClientOptions o;
    o.port = server.port();
    return o;
  }
};

// Runs `take` (a lock() with a short durability timeout) until the replica confirms it. On a
// loaded machine the replica may miss one 100 ms WAIT; a grant it did not confirm was released
// again, so simply ask again.
template <class Take>
void lock_despite_a_slow_replica(Take take) {
  for (int attempt = 0;; ++attempt) {
    try {
      take();
      return;
    } catch (const NotDurableError&) {
      if (attempt == 20) throw;
    }
  }
}

class DurableLockTest : public ::testing::TestWithParam<ServerKind> {
 protected:
  void SetUp() override {
    pair_ = std::make_unique<Pair>(GetParam(), "kw-durable");
    ASSERT_TRUE(pair_->replica_online());
  }
  ClientOptions primary() { return Pair::options(pair_->primary()); }
  ClientOptions replica() { return Pair::options(pair_->replica()); }
  std::unique_ptr<Pair> pair_;
};

TEST_P(DurableLockTest, ConfirmedGrantAndReleaseAreOnTheReplica) {
  ClientOptions o = primary();
  o.lock_durable_replicas = 1;
  o.lock_durable_timeout = 2s;
  Client client(o);
  Client on_replica(replica());
  Lock lock = client.get_lock("durable:confirmed");
  std::vector<std::string> errors;
  lock.on_error([&](const std::exception& e) { errors.push_back(e.what()); });
  lock.lock();
  // WAIT answered only once the replica had applied the grant: no polling needed.
  EXPECT_EQ(on_replica.command("HGET", "durable:confirmed", lock.owner()).str(), "1");
  lock.lock();  // a re-entry is confirmed the same way
  EXPECT_EQ(on_replica.command("HGET", "durable:confirmed", lock.owner()).str(), "2");
  lock.unlock();
  lock.unlock();
  EXPECT_EQ(on_replica.command("EXISTS", "durable:confirmed").integer(), 0);
  EXPECT_TRUE(errors.empty());

  FencedLock fenced = client.get_fenced_lock("durable:fenced");
  int64_t token = fenced.lock_and_get_token();
  EXPECT_EQ(on_replica.command("HGET", "durable:fenced", "keywarden:fencing-token").str(),
            std::to_string(token));
  fenced.unlock();
}

TEST_P(DurableLockTest, TooFewReplicasUndoTheGrant) {
  Client client(primary());
  Lock lock = client.get_lock("durable:short");
  lock.require_replicas(2, 1000ms);  // there is one; it has a second to acknowledge
  try {
    lock.try_lock();
    ADD_FAILURE() << "a grant one replica short was reported";
  } catch (const NotDurableError& e) {
    EXPECT_EQ(e.acknowledged(), 1);
    EXPECT_EQ(e.required(), 2);
    EXPECT_NE(std::string(e.what()).find("1 of 2 required replicas"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(client.command("EXISTS", "durable:short").integer(), 0);
  EXPECT_FALSE(lock.valid());
  EXPECT_THROW(lock.lock(), NotDurableError);
  EXPECT_EQ(client.command("EXISTS", "durable:short").integer(), 0);
  // Asking for what there is works.
  lock.require_replicas(1, 2s);
  lock.lock();
  EXPECT_TRUE(lock.is_held());
  lock.unlock();
  EXPECT_THROW(lock.require_replicas(-1, 1s), std::invalid_argument);
}

TEST_P(DurableLockTest, UnconfirmedRenewalsLoseTheHold) {
  ClientOptions o = primary();
  o.lock_watchdog_timeout = 900ms;
  o.lock_durable_replicas = 1;
  o.lock_durable_timeout = 100ms;
  Client client(o);
  Lock lock = client.get_lock("durable:renew");
  testing::LostLog lost;
  lock.on_lost(lost.callback());
  lock_despite_a_slow_replica([&] { lock.lock(); });  // the watchdog renews it
  pair_->replica().freeze();
  // Renewals still reach the primary, but no replica confirms them: the local deadline stays
  // put and passes, as if the renewals had failed.
  std::optional<LockLostReason> reason = lost.wait(10s);
  pair_->replica().thaw();
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason, LockLostReason::kRenewFailed);
  EXPECT_FALSE(lock.valid());
}

TEST_P(DurableLockTest, UnconfirmedReleaseGoesToOnError) {
  ClientOptions o = primary();
  o.lock_durable_replicas = 1;
  o.lock_durable_timeout = 100ms;
  Client client(o);
  Lock lock = client.get_lock("durable:release");
  std::vector<std::string> errors;
  lock.on_error([&](const std::exception& e) {
    EXPECT_NE(dynamic_cast<const NotDurableError*>(&e), nullptr);
    errors.push_back(e.what());
  });
  lock_despite_a_slow_replica([&] { lock.lock(60s); });
  pair_->replica().freeze();
  lock.unlock();
  pair_->replica().thaw();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("the release was acknowledged by 0 of 1"), std::string::npos)
      << errors[0];
  EXPECT_EQ(client.command("EXISTS", "durable:release").integer(), 0);  // released on the primary
  EXPECT_FALSE(lock.valid());
}

INSTANTIATE_TEST_SUITE_P(
    Servers, DurableLockTest, ::testing::Values(ServerKind::kKeywarden, ServerKind::kRedis),
    [](const auto& info) { return testing::server_name(info.param); });

}  // namespace
}  // namespace keywarden
