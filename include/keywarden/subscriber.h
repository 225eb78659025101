// keywarden::Subscriber: a pub/sub subscription on its own connection and its own reader
// thread. Handlers run on that thread. subscribe() returns once the server has confirmed, so a
// caller can subscribe first and then act on state the messages will report changes to. When
// the connection breaks, the reader reconnects with backoff and subscribes everything again.
//
// Made from options with cluster.addresses (a Redis Cluster), it keeps one such connection per
// node that has shard channels: ssubscribe() sends SSUBSCRIBE to the primary owning the
// channel's slot (following -MOVED), and when a slot moves away (the node drops its channels
// with `sunsubscribe`) the channel is subscribed again on the new owner and on_reconnect
// fires; so does a node that stops accepting connections (a failover). subscribe() and
// psubscribe() use one connection to the first seed node that accepts (a cluster delivers
// classic PUBLISH to every node).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "keywarden/options.h"

namespace keywarden {

struct Message {
  enum class Kind { kMessage, kPatternMessage, kShardMessage };
  Kind kind = Kind::kMessage;
  std::string channel;
  std::string payload;
  std::string pattern;  // the matching pattern, for kPatternMessage only
};

using MessageHandler = std::function<void(const Message&)>;

namespace detail {
class SubscriberCore;
class ClusterSubscriber;
class SentinelWatch;
}

class Subscriber {
 public:
  // Starts the reader thread, which connects (HELLO 3 when the server offers it, else RESP2
  // subscribed mode) with `options`' address, credentials and timeouts. Through Sentinel
  // (options.sentinel.addresses set) it connects to the primary the sentinels name and follows
  // their +switch-master: when our group's primary changes, the connection is dropped and
  // reopened to the new primary, every subscription is made again and on_reconnect runs.
  explicit Subscriber(ClientOptions options);
  // Stops the reader thread (a handler running at that moment finishes first) and closes
  // the connection. Must not be called from a handler.
  ~Subscriber();
  Subscriber(const Subscriber&) = delete;
  Subscriber& operator=(const Subscriber&) = delete;

  // Registers `handler` for the channel / pattern / shard channel and returns once the server
  // confirmed the subscription (a new handler for a name already subscribed replaces the old
  // one). Throws TimeoutError when no confirmation arrives within the command timeout (the
  // connection may be down; the subscription is withdrawn). Called from a handler, it
  // returns without waiting.
  void subscribe(const std::string& channel, MessageHandler handler);
  void psubscribe(const std::string& pattern, MessageHandler handler);
  void ssubscribe(const std::string& channel, MessageHandler handler);

  // Drops the handler at once (no later message reaches it) and tells the server.
  void unsubscribe(const std::string& channel);
  void punsubscribe(const std::string& pattern);
  void sunsubscribe(const std::string& channel);

  // Called on the reader thread after every reconnect, once everything is subscribed again:
  // messages published while the connection was down are lost, and this says so.
  void on_reconnect(std::function<void()> callback);

  // True while the connection is up and every subscription confirmed.
  bool connected() const;

 private:
  friend class detail::SentinelWatch;
  // A subscriber on the sentinels of options.sentinel themselves (their credentials, the next
  // sentinel in the list whenever a connection fails), for SentinelWatch.
  struct OnSentinels {};
  Subscriber(const ClientOptions& options, OnSentinels);
  // subscribe() without waiting for the confirmation (sent when the connection is up).
  void subscribe_later(const std::string& channel, MessageHandler handler);
  void add(int kind, const std::string& name, MessageHandler handler);
  void remove(int kind, const std::string& name);

  std::shared_ptr<detail::SubscriberCore> core_;         // one server (or its sentinels)
  std::shared_ptr<detail::ClusterSubscriber> cluster_;  // or a Redis Cluster
};

}  // namespace keywarden
