// The pub/sub hub on its own: bookkeeping on both sides, delivery frames in RESP2 and RESP3,
// receiver counts, removal of everything at once.
#include "pubsub/pubsub.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace keywarden {
namespace {

class TestSubscriber final : public Subscriber {
 public:
  explicit TestSubscriber(int resp = 2) : writer_(&out, resp) {}
  ReplyWriter* pubsub_writer() override { return closing ? nullptr : &writer_; }
  void pubsub_delivered() override { ++delivered; }

  std::string take() { return std::exchange(out, {}); }

  std::string out;
  int delivered = 0;
  bool closing = false;

 private:
  ReplyWriter writer_;
};

TEST(PubSub, SubscribeOnceAndCount) {
  PubSub hub;
  TestSubscriber a, b;
  EXPECT_TRUE(hub.idle());
  EXPECT_TRUE(hub.subscribe(&a, "news"));
  EXPECT_FALSE(hub.subscribe(&a, "news"));
  EXPECT_TRUE(hub.subscribe(&b, "news"));
  EXPECT_TRUE(hub.subscribe(&a, "sport"));
  EXPECT_FALSE(hub.idle());
  EXPECT_EQ(hub.channel_count(), 2u);
  EXPECT_EQ(hub.subscriber_count("news"), 2u);
  EXPECT_EQ(hub.subscriber_count("sport"), 1u);
  EXPECT_EQ(hub.subscriber_count("none"), 0u);
  EXPECT_EQ(a.channels(), (std::vector<std::string>{"news", "sport"}));
  EXPECT_EQ(a.subscription_count(), 2u);
  EXPECT_TRUE(a.subscribed());

  EXPECT_TRUE(hub.unsubscribe(&a, "news"));
  EXPECT_FALSE(hub.unsubscribe(&a, "news"));
  EXPECT_FALSE(hub.unsubscribe(&a, "never"));
  EXPECT_EQ(hub.subscriber_count("news"), 1u);
  EXPECT_TRUE(hub.unsubscribe(&b, "news"));
  // A channel nobody listens to any more is gone.
  EXPECT_EQ(hub.channel_count(), 1u);
  EXPECT_EQ(a.channels(), (std::vector<std::string>{"sport"}));
}

TEST(PubSub, PublishEncodesOnceForEachProtocol) {
  PubSub hub;
  TestSubscriber two(2), three(3);
  hub.subscribe(&two, "ch");
  hub.subscribe(&three, "ch");
  EXPECT_EQ(hub.publish("ch", "hello"), 2u);
  EXPECT_EQ(two.take(), "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n");
  EXPECT_EQ(three.take(), ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n");
  EXPECT_EQ(two.delivered, 1);
  EXPECT_EQ(hub.publish("other", "x"), 0u);
  EXPECT_EQ(two.take(), "");
  // Empty and binary messages.
  EXPECT_EQ(hub.publish("ch", std::string_view("\0\r\n", 3)), 2u);
  EXPECT_EQ(two.take(), std::string("*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$3\r\n\0\r\n\r\n", 34));
  EXPECT_EQ(hub.publish("ch", ""), 2u);
  EXPECT_EQ(two.take(), "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$0\r\n\r\n");
}

TEST(PubSub, PatternsDeliverOncePerMatchingPattern) {
  PubSub hub;
  TestSubscriber a, b;
  EXPECT_TRUE(hub.psubscribe(&a, "n*"));
  EXPECT_FALSE(hub.psubscribe(&a, "n*"));
  EXPECT_TRUE(hub.psubscribe(&a, "news"));
  EXPECT_TRUE(hub.psubscribe(&b, "n*"));
  hub.subscribe(&a, "news");
  // Distinct patterns, not subscriptions.
  EXPECT_EQ(hub.pattern_count(), 2u);
  EXPECT_EQ(a.subscription_count(), 3u);
  // a: the channel and both patterns; b: one pattern.
  EXPECT_EQ(hub.publish("news", "m"), 4u);
  std::string got = a.take();
  EXPECT_NE(got.find("*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$1\r\nm\r\n"), std::string::npos);
  EXPECT_NE(got.find("*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$1\r\nm\r\n"),
            std::string::npos);
  EXPECT_NE(got.find("*4\r\n$8\r\npmessage\r\n$4\r\nnews\r\n$4\r\nnews\r\n$1\r\nm\r\n"),
            std::string::npos);
  EXPECT_EQ(b.take(), "*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$1\r\nm\r\n");
  EXPECT_EQ(hub.publish("nope", "m"), 2u);  // n* for both
  EXPECT_EQ(hub.publish("other", "m"), 0u);
  EXPECT_TRUE(hub.punsubscribe(&a, "n*"));
  EXPECT_FALSE(hub.punsubscribe(&a, "n*"));
  EXPECT_EQ(hub.pattern_count(), 2u);
  EXPECT_TRUE(hub.punsubscribe(&b, "n*"));
  EXPECT_EQ(hub.pattern_count(), 1u);
}

TEST(PubSub, ShardChannelsAreSeparate) {
  PubSub hub;
  TestSubscriber a(3);
  EXPECT_TRUE(hub.ssubscribe(&a, "s"));
  EXPECT_FALSE(hub.ssubscribe(&a, "s"));
  // PUBLISH reaches nobody yet.
  EXPECT_TRUE(hub.idle());
  hub.psubscribe(&a, "*");
  EXPECT_FALSE(hub.idle());
  EXPECT_EQ(a.subscription_count(), 1u);  // patterns only: shard channels count apart
  EXPECT_EQ(a.shard_channels().size(), 1u);
  EXPECT_EQ(hub.shard_channel_count(), 1u);
  EXPECT_EQ(hub.channel_count(), 0u);
  EXPECT_EQ(hub.shard_subscriber_count("s"), 1u);
  EXPECT_EQ(hub.subscriber_count("s"), 0u);
  // SPUBLISH ignores patterns; PUBLISH ignores shard subscribers.
  EXPECT_EQ(hub.spublish("s", "v"), 1u);
  EXPECT_EQ(a.take(), ">3\r\n$8\r\nsmessage\r\n$1\r\ns\r\n$1\r\nv\r\n");
  EXPECT_EQ(hub.publish("s", "v"), 1u);
  EXPECT_EQ(a.take(), ">4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$1\r\ns\r\n$1\r\nv\r\n");
  EXPECT_TRUE(hub.sunsubscribe(&a, "s"));
  EXPECT_FALSE(hub.sunsubscribe(&a, "s"));
  EXPECT_EQ(hub.spublish("s", "v"), 0u);
}

TEST(PubSub, UnsubscribeAllLeavesOthersAlone) {
  PubSub hub;
  TestSubscriber a, b;
  hub.subscribe(&a, "c1");
  hub.subscribe(&a, "c2");
  hub.subscribe(&b, "c1");
  hub.psubscribe(&a, "p*");
  hub.ssubscribe(&a, "s1");
  hub.ssubscribe(&b, "s1");
  hub.unsubscribe_all(&a);
  EXPECT_FALSE(a.subscribed());
  EXPECT_TRUE(a.channels().empty());
  EXPECT_EQ(hub.channel_count(), 1u);
  EXPECT_EQ(hub.pattern_count(), 0u);
  EXPECT_EQ(hub.shard_channel_count(), 1u);
  EXPECT_EQ(hub.publish("c1", "x"), 1u);
  EXPECT_EQ(a.take(), "");
  hub.unsubscribe_all(&b);
  EXPECT_TRUE(hub.idle());
}

TEST(PubSub, ClosingSubscriberStillCountsButGetsNothing) {
  PubSub hub;
  TestSubscriber a;
  hub.subscribe(&a, "c");
  a.closing = true;
  EXPECT_EQ(hub.publish("c", "x"), 1u);
  EXPECT_EQ(a.out, "");
  EXPECT_EQ(a.delivered, 0);
}

TEST(PubSub, ChannelListing) {
  PubSub hub;
  TestSubscriber a;
  hub.subscribe(&a, "b");
  hub.subscribe(&a, "a");
  hub.ssubscribe(&a, "s");
  std::vector<std::string> names;
  hub.for_each_channel([&](std::string_view name) { names.emplace_back(name); });
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b"}));
  names.clear();
  hub.for_each_shard_channel([&](std::string_view name) { names.emplace_back(name); });
  EXPECT_EQ(names, (std::vector<std::string>{"s"}));
}

TEST(PubSub, BigMessage) {
  PubSub hub;
  TestSubscriber a;
  hub.subscribe(&a, "c");
  std::string big(200000, 'x');
  EXPECT_EQ(hub.publish("c", big), 1u);
  EXPECT_EQ(a.take(), "*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$200000\r\n" + big + "\r\n");
  EXPECT_EQ(hub.publish("c", "small"), 1u);
  EXPECT_EQ(a.take(), "*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$5\r\nsmall\r\n");
}

}  // namespace
}  // namespace keywarden
