#include "pubsub/pubsub.h"

#include <algorithm>

#include "common/glob.h"

namespace keywarden {

bool PubSub::subscribe(Subscriber* subscriber, std::string_view channel) {
  auto& list = channels_[std::string(channel)];
  if (std::find(list.begin(), list.end(), subscriber) != list.end()) return false;
  list.push_back(subscriber);
  return true;
}

bool PubSub::unsubscribe(Subscriber* subscriber, std::string_view channel) {
  auto found = channels_.find(std::string(channel));
  if (found == channels_.end()) return false;
  auto& list = found->second;
  auto at = std::find(list.begin(), list.end(), subscriber);
  if (at == list.end()) return false;
  list.erase(at);
  if (list.empty()) channels_.erase(found);
  return true;
}

bool PubSub::psubscribe(Subscriber* subscriber, std::string_view pattern) {
  for (const auto& entry : patterns_) {
    if (entry.subscriber == subscriber && entry.pattern == pattern) return false;
  }
  patterns_.push_back({std::string(pattern), subscriber});
  return true;
}

bool PubSub::punsubscribe(Subscriber* subscriber, std::string_view pattern) {
  auto at = std::find_if(patterns_.begin(), patterns_.end(), [&](const auto& entry) {
    return entry.subscriber == subscriber && entry.pattern == pattern;
  });
  if (at == patterns_.end()) return false;
  patterns_.erase(at);
  return true;
}

size_t PubSub::publish(std::string_view channel, std::string_view message) {
  size_t receivers = 0;
  auto found = channels_.find(std::string(channel));
  if (found != channels_.end()) {
    for (Subscriber* subscriber : found->second) {
      ReplyWriter& out = subscriber->pubsub_writer();
      if (out.resp() == 3) {
        out.push_header(3);
      } else {
        out.array_header(3);
      }
      out.bulk("message");
      out.bulk(channel);
      out.bulk(message);
      subscriber->pubsub_delivered();
      ++receivers;
    }
  }
  for (const auto& entry : patterns_) {
    if (!glob_match(entry.pattern, channel)) continue;
    ReplyWriter& out = entry.subscriber->pubsub_writer();
    if (out.resp() == 3) {
      out.push_header(4);
    } else {
      out.array_header(4);
    }
    out.bulk("pmessage");
    out.bulk(entry.pattern);
    out.bulk(channel);
    out.bulk(message);
    entry.subscriber->pubsub_delivered();
    ++receivers;
  }
  return receivers;
}

}  // namespace keywarden
