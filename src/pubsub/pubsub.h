// Publish/subscribe: which clients listen on which channels, patterns and shard channels, and
// the delivery of one published message to all of them. It knows nothing of sockets: a
// listening client is a `Subscriber`, which gives the hub the reply writer its messages go to
// and remembers, in subscription order, what it listens to. The command layer holds one hub in
// its ServerState; keyspace notifications are published through it like any message.
//
// Invariants: a subscriber appears in a channel's (pattern's) list exactly when that channel
// (pattern) is in its own list; a channel or pattern with no subscriber left has no entry, so
// the hub's sizes are what PUBSUB and INFO report. The hub never calls back into a subscriber
// while changing its lists, so a subscriber may ask to be closed from pubsub_delivered() (it
// must do so asynchronously: removal happens when the owner calls unsubscribe_all).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/string_hash.h"
#include "resp/reply_writer.h"

namespace keywarden {

class Subscriber {
 public:
  virtual ~Subscriber() = default;
  // Where a message for this client is written (its output buffer, in its protocol); null
  // while the client is being closed, which drops the message.
  virtual ReplyWriter* pubsub_writer() = 0;
  // Called after a message was written, so the owner can schedule a flush or enforce an
  // output limit.
  virtual void pubsub_delivered() {}

  const std::vector<std::string>& channels() const { return channels_; }
  const std::vector<std::string>& patterns() const { return patterns_; }
  const std::vector<std::string>& shard_channels() const { return shard_channels_; }
  // The count SUBSCRIBE, PSUBSCRIBE and their UNSUBSCRIBEs confirm with: channels plus
  // patterns (shard channels are counted apart, by SSUBSCRIBE/SUNSUBSCRIBE).
  size_t subscription_count() const { return channels_.size() + patterns_.size(); }
  // Subscribed to anything at all: a RESP2 client is then in subscribed mode.
  bool subscribed() const {
    return !channels_.empty() || !patterns_.empty() || !shard_channels_.empty();
  }

 private:
  friend class PubSub;
  std::vector<std::string> channels_;
  std::vector<std::string> patterns_;
  std::vector<std::string> shard_channels_;
};

class PubSub {
 public:
  // Adds `subscriber` to `channel`; false when it was already subscribed.
  bool subscribe(Subscriber* subscriber, std::string_view channel) {
    return add(channels_, subscriber->channels_, subscriber, channel);
  }
  // Removes it; false when it was not subscribed.
  bool unsubscribe(Subscriber* subscriber, std::string_view channel) {
    return remove(channels_, subscriber->channels_, subscriber, channel);
  }
  bool psubscribe(Subscriber* subscriber, std::string_view pattern) {
    return add(patterns_, subscriber->patterns_, subscriber, pattern);
  }
  bool punsubscribe(Subscriber* subscriber, std::string_view pattern) {
    return remove(patterns_, subscriber->patterns_, subscriber, pattern);
  }
  bool ssubscribe(Subscriber* subscriber, std::string_view channel) {
    return add(shard_channels_, subscriber->shard_channels_, subscriber, channel);
  }
  bool sunsubscribe(Subscriber* subscriber, std::string_view channel) {
    return remove(shard_channels_, subscriber->shard_channels_, subscriber, channel);
  }
  // Drops every subscription of `subscriber`, silently (disconnect, RESET).
  void unsubscribe_all(Subscriber* subscriber);

  // Delivers `message` to every client subscribed to `channel` ("message") and to every client
  // with a matching pattern ("pmessage", once per matching pattern, as Redis does); returns
  // how many deliveries were made.
  size_t publish(std::string_view channel, std::string_view message);
  // SPUBLISH: to the subscribers of shard channel `channel` only ("smessage"; no patterns).
  size_t spublish(std::string_view channel, std::string_view message);
  // True while publish() would reach nobody (no channel or pattern subscriber; shard channels
  // only hear SPUBLISH), so publishers such as keyspace notifications can skip building one.
  bool idle() const { return channels_.empty() && patterns_.empty(); }

  // Introspection (PUBSUB, INFO): channels, patterns and shard channels with at least one
  // subscriber, and the subscribers of one channel.
  size_t channel_count() const { return channels_.size(); }
  size_t pattern_count() const { return patterns_.size(); }
  size_t shard_channel_count() const { return shard_channels_.size(); }
  size_t subscriber_count(std::string_view channel) const { return count(channels_, channel); }
  size_t shard_subscriber_count(std::string_view channel) const {
    return count(shard_channels_, channel);
  }
  void for_each_channel(const std::function<void(std::string_view)>& visit) const;
  void for_each_shard_channel(const std::function<void(std::string_view)>& visit) const;

 private:
  // Heterogeneous lookup: a published channel is found without building a std::string.
  using SubscriberMap = std::unordered_map<std::string, std::vector<Subscriber*>,
                                           TransparentStringHash, std::equal_to<>>;

  static bool add(SubscriberMap& map, std::vector<std::string>& own, Subscriber* subscriber,
                  std::string_view name);
  static bool remove(SubscriberMap& map, std::vector<std::string>& own, Subscriber* subscriber,
                     std::string_view name);
  static size_t count(const SubscriberMap& map, std::string_view name);
  // Encodes a message frame (RESP2 "*<n>" header and bulks) once into frame_; `pattern` is
  // null for a message without one.
  void encode_frame(std::string_view kind, const std::string* pattern, std::string_view channel,
                    std::string_view message);
  // Appends frame_ to every subscriber in `subscribers` (">" header for RESP3 ones).
  size_t deliver(const std::vector<Subscriber*>& subscribers);
  size_t publish_to(const SubscriberMap& map, std::string_view kind, std::string_view channel,
                    std::string_view message);

  SubscriberMap channels_;
  SubscriberMap patterns_;
  SubscriberMap shard_channels_;
  // The RESP2 encoding of the message being delivered, reused between publishes so that a
  // publish allocates nothing once it has grown to the working message size.
  std::string frame_;
};

}  // namespace keywarden
