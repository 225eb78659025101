// keywarden::Subscriber against a real keywarden-server and a stock redis-server: delivery on
// channels, patterns and shard channels, unsubscribe, and re-subscription after a restart.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "keywarden/keywarden.h"
#include "keywarden/subscriber.h"
#include "test_servers.h"

namespace keywarden {
namespace {

using testing::ServerKind;
using testing::ServerProcess;
using namespace std::chrono_literals;

// Messages a handler received, for the test thread to wait on.
class Inbox {
 public:
  MessageHandler handler() {
    return [this](const Message& m) {
      std::lock_guard<std::mutex> guard(mutex_);
      messages_.push_back(m);
      cv_.notify_all();
    };
  }
  bool wait_for(size_t count, std::chrono::milliseconds limit = 3000ms) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, limit, [&] { return messages_.size() >= count; });
  }
  std::vector<Message> messages() {
    std::lock_guard<std::mutex> guard(mutex_);
    return messages_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Message> messages_;
};

class SubscriberTest : public ::testing::TestWithParam<ServerKind> {
 protected:
  void SetUp() override { server_ = std::make_unique<ServerProcess>(GetParam()); }
  ClientOptions options() const {
    ClientOptions o;
    o.port = server_->port();
    o.command_timeout = 3000ms;
    o.reconnect_backoff_min = 20ms;
    o.reconnect_backoff_max = 200ms;
    return o;
  }
  std::unique_ptr<ServerProcess> server_;
};

TEST_P(SubscriberTest, DeliversChannelMessagesAfterConfirmedSubscribe) {
  Client client(options());
  Subscriber subscriber(options());
  Inbox inbox;
  subscriber.subscribe("news", inbox.handler());
  EXPECT_TRUE(subscriber.connected());
  // subscribe() returned after the confirmation, so this PUBLISH reaches the subscriber.
  EXPECT_EQ(client.command("PUBLISH", "news", "hello").integer(), 1);
  EXPECT_EQ(client.command("PUBLISH", "other", "x").integer(), 0);
  EXPECT_EQ(client.command("PUBLISH", "news", "world").integer(), 1);
  ASSERT_TRUE(inbox.wait_for(2));
  auto got = inbox.messages();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].kind, Message::Kind::kMessage);
  EXPECT_EQ(got[0].channel, "news");
  EXPECT_EQ(got[0].payload, "hello");
  EXPECT_EQ(got[1].payload, "world");
}

TEST_P(SubscriberTest, PatternSubscription) {
  Client client(options());
  Subscriber subscriber(options());
  Inbox inbox;
  subscriber.psubscribe("ev.*", inbox.handler());
  EXPECT_EQ(client.command("PUBLISH", "ev.one", "1").integer(), 1);
  EXPECT_EQ(client.command("PUBLISH", "other", "2").integer(), 0);
  ASSERT_TRUE(inbox.wait_for(1));
  auto got = inbox.messages();
  EXPECT_EQ(got[0].kind, Message::Kind::kPatternMessage);
  EXPECT_EQ(got[0].pattern, "ev.*");
  EXPECT_EQ(got[0].channel, "ev.one");
  EXPECT_EQ(got[0].payload, "1");
}

TEST_P(SubscriberTest, ShardChannel) {
  Client client(options());
  Subscriber subscriber(options());
  Inbox inbox;
  subscriber.ssubscribe("shard{a}", inbox.handler());
  EXPECT_EQ(client.command("SPUBLISH", "shard{a}", "s").integer(), 1);
  ASSERT_TRUE(inbox.wait_for(1));
  auto got = inbox.messages();
  EXPECT_EQ(got[0].kind, Message::Kind::kShardMessage);
  EXPECT_EQ(got[0].channel, "shard{a}");
  EXPECT_EQ(got[0].payload, "s");
}

TEST_P(SubscriberTest, UnsubscribeStopsDelivery) {
  Client client(options());
  Subscriber subscriber(options());
  Inbox a, b;
  subscriber.subscribe("a", a.handler());
  subscriber.subscribe("b", b.handler());
  subscriber.unsubscribe("a");
  client.command("PUBLISH", "a", "lost");
  client.command("PUBLISH", "b", "kept");
  ASSERT_TRUE(b.wait_for(1));
  EXPECT_TRUE(a.messages().empty());
  // The server has dropped "a" too (b's message came after the UNSUBSCRIBE was processed).
  EXPECT_EQ(client.command("PUBLISH", "a", "x").integer(), 0);
  // Subscribing again after an unsubscribe works.
  subscriber.subscribe("a", a.handler());
  EXPECT_EQ(client.command("PUBLISH", "a", "back").integer(), 1);
  ASSERT_TRUE(a.wait_for(1));
  EXPECT_EQ(a.messages()[0].payload, "back");
}

TEST_P(SubscriberTest, HandlerMaySubscribeWithoutDeadlock) {
  Client client(options());
  Subscriber subscriber(options());
  Inbox second;
  subscriber.subscribe("first", [&](const Message&) {
    subscriber.subscribe("second", second.handler());
  });
  client.command("PUBLISH", "first", "go");
  auto deadline = std::chrono::steady_clock::now() + 3s;
  while (client.command("PUBLISH", "second", "x").integer() == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(second.wait_for(1));
}

TEST_P(SubscriberTest, ReconnectsAndResubscribesAfterServerRestart) {
  Subscriber subscriber(options());
  Inbox inbox, patterns;
  std::atomic<int> reconnects{0};
  subscriber.on_reconnect([&] { ++reconnects; });
  subscriber.subscribe("c", inbox.handler());
  subscriber.psubscribe("p.*", patterns.handler());
  server_->stop();
  server_->start();
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (reconnects.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(reconnects.load(), 1);
  EXPECT_TRUE(subscriber.connected());
  Client client(options());
  EXPECT_EQ(client.command("PUBLISH", "c", "again").integer(), 1);
  EXPECT_EQ(client.command("PUBLISH", "p.x", "too").integer(), 1);
  ASSERT_TRUE(inbox.wait_for(1));
  ASSERT_TRUE(patterns.wait_for(1));
  EXPECT_EQ(inbox.messages()[0].payload, "again");
}

TEST_P(SubscriberTest, IdleConnectionIsKeptByPings) {
  ClientOptions o = options();
  // Long enough that a PONG delayed by a loaded machine still beats the second interval.
  o.keepalive_interval = 300ms;
  Subscriber subscriber(o);
  Inbox inbox;
  std::atomic<int> reconnects{0};
  subscriber.on_reconnect([&] { ++reconnects; });
  subscriber.subscribe("c", inbox.handler());
  std::this_thread::sleep_for(1300ms);  // several silent intervals, each answered by a PONG
  EXPECT_EQ(reconnects.load(), 0);
  Client client(options());
  Reply stats = client.command("INFO", "commandstats");
  EXPECT_NE(stats.str().find("cmdstat_ping:calls="), std::string::npos);
  EXPECT_EQ(client.command("PUBLISH", "c", "still").integer(), 1);
  ASSERT_TRUE(inbox.wait_for(1));
}

TEST_P(SubscriberTest, FrozenServerIsTakenForDeadAndReconnected) {
  ClientOptions o = options();
  o.keepalive_interval = 100ms;
  o.connect_timeout = 300ms;
  Subscriber subscriber(o);
  Inbox inbox;
  std::atomic<int> reconnects{0};
  subscriber.on_reconnect([&] { ++reconnects; });
  subscriber.subscribe("c", inbox.handler());
  // The socket stays open while the server is stopped: only the unanswered PING shows it.
  server_->freeze();
  auto deadline = std::chrono::steady_clock::now() + 3s;
  while (subscriber.connected() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_FALSE(subscriber.connected());
  server_->thaw();
  deadline = std::chrono::steady_clock::now() + 5s;
  while (reconnects.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_GE(reconnects.load(), 1);
  Client client(options());
  EXPECT_EQ(client.command("PUBLISH", "c", "back").integer(), 1);
  ASSERT_TRUE(inbox.wait_for(1));
}

TEST_P(SubscriberTest, SubscribeTimesOutWhileServerIsDown) {
  ClientOptions o = options();
  o.command_timeout = 200ms;
  server_->stop();
  Subscriber subscriber(o);
  EXPECT_THROW(subscriber.subscribe("c", [](const Message&) {}), TimeoutError);
  EXPECT_FALSE(subscriber.connected());
}

INSTANTIATE_TEST_SUITE_P(Servers, SubscriberTest,
                         ::testing::Values(ServerKind::kKeywarden, ServerKind::kRedis),
                         [](const auto& info) { return testing::server_name(info.param); });

}  // namespace
}  // namespace keywarden
