// SentinelWatch (see sentinel_watch.h).
#include "client/sentinel_watch.h"

#include <sstream>
#include <string>

namespace keywarden::detail {

namespace {

constexpr const char* kSwitchChannel = "+switch-master";

}  // namespace

SentinelWatch::SentinelWatch(const ClientOptions& options, std::function<void()> on_change,
                             bool report_switches)
    : master_name_(options.sentinel.master_name),
      on_change_(std::move(on_change)) {
  if (report_switches) on_primary_switch_ = options.sentinel.on_primary_switch;
  subscriber_.reset(new Subscriber(options, Subscriber::OnSentinels{}));
  subscriber_->on_reconnect([this] { advance(); });
  // Asynchronous: the sentinels may all be down now, and the watch must not hold up the
  // client's construction; the reader subscribes as soon as one accepts.
  subscriber_->subscribe_later(kSwitchChannel, [this](const Message& message) {
    std::istringstream fields(message.payload);
    std::string name, old_ip, old_port, new_ip, new_port;
    if (!(fields >> name >> old_ip >> old_port >> new_ip >> new_port)) return;
    if (name != master_name_) return;
    advance();
    if (on_primary_switch_) {
      try {
        on_primary_switch_(old_ip + ":" + old_port, new_ip + ":" + new_port);
      } catch (...) {
        // The user's callback owns its errors; the watch goes on.
      }
    }
  });
}

SentinelWatch::~SentinelWatch() { subscriber_.reset(); }

void SentinelWatch::advance() {
  epoch_.fetch_add(1, std::memory_order_acq_rel);
  if (on_change_) on_change_();
}

}  // namespace keywarden::detail
