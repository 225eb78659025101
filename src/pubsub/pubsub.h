// Publish/subscribe: which clients listen on which channels, patterns and shard channels, and
// the delivery of one published message to all of them. It knows nothing of sockets: a
// listening client is a `Subscriber`, which gives the hub the reply writer its messages go to.
// The command layer holds one hub in its ServerState; keyspace notifications are published
// through it like any message.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>
#include "resp/reply_writer.h"

namespace keywarden {

class Subscriber {
 public:
  virtual ~Subscriber() = default;
  // Where a message for this client is written (its output buffer, in its protocol).
  virtual ReplyWriter& pubsub_writer() = 0;
  // Called after a message was written, so the owner can schedule a flush or enforce an
  // output limit.
  virtual void pubsub_delivered() {}
};

class PubSub {
 public:
  // Adds `subscriber` to `channel`; false when it was already subscribed.
  bool subscribe(Subscriber* subscriber, std::string_view channel);
  // Removes it; false when it was not subscribed.
  bool unsubscribe(Subscriber* subscriber, std::string_view channel);
  bool psubscribe(Subscriber* subscriber, std::string_view pattern);
  bool punsubscribe(Subscriber* subscriber, std::string_view pattern);

  // Delivers `message` to every client subscribed to `channel` and to every client with a
  // matching pattern (once per matching pattern, as Redis does); returns how many deliveries
  // were made.
  size_t publish(std::string_view channel, std::string_view message);
  // True while nobody listens to anything, so publishers can skip building a message.
  bool idle() const { return channels_.empty() && patterns_.empty(); }

 private:
  struct PatternSubscription {
    std::string pattern;
    Subscriber* subscriber;
  };
  std::unordered_map<std::string, std::vector<Subscriber*>> channels_;
  std::vector<PatternSubscription> patterns_;
};

}  // namespace keywarden
