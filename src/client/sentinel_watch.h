// SentinelWatch: follows the failovers of ClientOptions::sentinel's group as the sentinels
// announce them. It is a Subscriber on the sentinels themselves (one at a time: the first that
// accepts, the next one in the list when that connection is lost) to `+switch-master`, whose
// payload is "<group> <old ip> <old port> <new ip> <new port>". Every switch of our group
// advances epoch(), and so does every reconnect of the watch after the first connection, since
// a switch announced while it was away is lost. Connections remember the epoch they were opened
// in and reopen (asking the sentinels again) when it has moved, so that an idle client's next
// command goes to the new primary instead of meeting -READONLY on the old one.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "keywarden/options.h"
#include "keywarden/subscriber.h"

namespace keywarden::detail {

class SentinelWatch {
 public:
  // `on_change` runs on the watch's thread after each advance of the epoch. With
  // `report_switches`, options.sentinel.on_primary_switch is called for each switch too.
  SentinelWatch(const ClientOptions& options, std::function<void()> on_change,
                bool report_switches);
  ~SentinelWatch();
  SentinelWatch(const SentinelWatch&) = delete;
  SentinelWatch& operator=(const SentinelWatch&) = delete;

  const std::atomic<uint64_t>& epoch() const { return epoch_; }

 private:
  void advance();

  const std::string master_name_;
  std::function<void(const std::string&, const std::string&)> on_primary_switch_;
  std::function<void()> on_change_;
  std::atomic<uint64_t> epoch_{0};
  // Last: its reader thread, which calls into the members above, stops first.
  std::unique_ptr<Subscriber> subscriber_;
};

}  // namespace keywarden::detail
