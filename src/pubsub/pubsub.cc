// The pub/sub hub: subscription bookkeeping on both sides (hub and subscriber) and message
// delivery, each message encoded once and copied to every receiver.
#include "pubsub/pubsub.h"

#include <algorithm>
#include <charconv>

#include "common/glob.h"

namespace keywarden {
namespace {

// A frame this large is not kept for the next publish.
constexpr size_t kFrameKeep = 64 * 1024;

void append_bulk(std::string& out, std::string_view bytes) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), bytes.size());
  out += '$';
  out.append(digits, end);
  out += "\r\n";
  out += bytes;
  out += "\r\n";
}

}  // namespace

bool PubSub::add(SubscriberMap& map, std::vector<std::string>& own, Subscriber* subscriber,
                 std::string_view name) {
  auto found = map.find(name);
  if (found == map.end()) {
    found = map.emplace(std::string(name), std::vector<Subscriber*>{}).first;
  } else if (std::find(found->second.begin(), found->second.end(), subscriber) !=
             found->second.end()) {
    return false;
  }
  found->second.push_back(subscriber);
  own.emplace_back(name);
  return true;
}

bool PubSub::remove(SubscriberMap& map, std::vector<std::string>& own, Subscriber* subscriber,
                    std::string_view name) {
  auto found = map.find(name);
  if (found == map.end()) return false;
  std::vector<Subscriber*>& list = found->second;
  auto at = std::find(list.begin(), list.end(), subscriber);
  if (at == list.end()) return false;
  list.erase(at);
  // `name` may view the subscriber's own copy: erase that last.
  auto mine = std::find(own.begin(), own.end(), name);
  if (list.empty()) map.erase(found);
  if (mine != own.end()) own.erase(mine);
  return true;
}

size_t PubSub::count(const SubscriberMap& map, std::string_view name) {
  auto found = map.find(name);
  return found == map.end() ? 0 : found->second.size();
}

void PubSub::unsubscribe_all(Subscriber* subscriber) {
  auto drop = [subscriber](SubscriberMap& map, std::vector<std::string>& own) {
    for (const std::string& name : own) {
      auto found = map.find(name);
      if (found == map.end()) continue;
      std::vector<Subscriber*>& list = found->second;
      list.erase(std::remove(list.begin(), list.end(), subscriber), list.end());
      if (list.empty()) map.erase(found);
    }
    own.clear();
  };
  drop(channels_, subscriber->channels_);
  drop(patterns_, subscriber->patterns_);
  drop(shard_channels_, subscriber->shard_channels_);
}

void PubSub::encode_frame(std::string_view kind, const std::string* pattern,
                          std::string_view channel, std::string_view message) {
  frame_.clear();
  frame_ += pattern == nullptr ? "*3\r\n" : "*4\r\n";
  append_bulk(frame_, kind);
  if (pattern != nullptr) append_bulk(frame_, *pattern);
  append_bulk(frame_, channel);
  append_bulk(frame_, message);
}

size_t PubSub::deliver(const std::vector<Subscriber*>& subscribers) {
  const std::string_view resp2 = frame_;
  for (Subscriber* subscriber : subscribers) {
    ReplyWriter* out = subscriber->pubsub_writer();
    if (out != nullptr) {
      if (out->resp() == 3) {
        // The same frame with a push header: only the type byte differs.
        out->raw(">");
        out->raw(resp2.substr(1));
      } else {
        out->raw(resp2);
      }
      subscriber->pubsub_delivered();
    }
  }
  // Every subscriber counts as a receiver, even one being closed, as in Redis.
  return subscribers.size();
}

size_t PubSub::publish_to(const SubscriberMap& map, std::string_view kind, std::string_view channel,
                          std::string_view message) {
  auto found = map.find(channel);
  if (found == map.end()) return 0;
  encode_frame(kind, nullptr, channel, message);
  return deliver(found->second);
}

size_t PubSub::publish(std::string_view channel, std::string_view message) {
  size_t receivers = publish_to(channels_, "message", channel, message);
  for (const auto& [pattern, subscribers] : patterns_) {
    if (!glob_match(pattern, channel)) continue;
    encode_frame("pmessage", &pattern, channel, message);
    receivers += deliver(subscribers);
  }
  if (frame_.capacity() > kFrameKeep) std::string().swap(frame_);
  return receivers;
}

size_t PubSub::spublish(std::string_view channel, std::string_view message) {
  size_t receivers = publish_to(shard_channels_, "smessage", channel, message);
  if (frame_.capacity() > kFrameKeep) std::string().swap(frame_);
  return receivers;
}

void PubSub::for_each_channel(const std::function<void(std::string_view)>& visit) const {
  for (const auto& entry : channels_) visit(entry.first);
}

void PubSub::for_each_shard_channel(const std::function<void(std::string_view)>& visit) const {
  for (const auto& entry : shard_channels_) visit(entry.first);
}

}  // namespace keywarden
