// CountDownLatch (see keywarden/count_down_latch.h): Redisson's RCountDownLatch layout, a
// string count and a channel told `0` when it reaches zero and `1` when a count is set.
#include "keywarden/count_down_latch.h"

#include <stdexcept>

#include "lock_service.h"

namespace keywarden {

namespace {

using detail::Clock;

// Redisson's messages on the latch channel.
constexpr const char* kZeroCountMessage = "0";
constexpr const char* kNewCountMessage = "1";

// KEYS[1] count; ARGV[1] the zero message, ARGV[2] the channel. The key goes at zero or below (a
// count_down on a missing latch leaves nothing behind); only the step to zero publishes.
const Script& count_down_script() {
  static const Script script(R"lua(
local count = redis.call('DECR', KEYS[1])
if count <= 0 then redis.call('DEL', KEYS[1]) end
if count == 0 then redis.call('PUBLISH', ARGV[2], ARGV[1]) end
return count
)lua");
  return script;
}

// KEYS[1] count; ARGV[1] the new-count message, ARGV[2] the count, ARGV[3] the channel.
const Script& try_set_script() {
  static const Script script(R"lua(
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[1])
return 1
)lua");
  return script;
}

// KEYS[1] count; ARGV[1] the new-count message (what Redisson sends), ARGV[2] the channel.
const Script& delete_script() {
  static const Script script(R"lua(
if redis.call('DEL', KEYS[1]) == 0 then return 0 end
redis.call('PUBLISH', ARGV[2], ARGV[1])
return 1
)lua");
  return script;
}

}  // namespace

CountDownLatch Client::get_count_down_latch(std::string name) {
  return CountDownLatch(lock_service(), std::move(name));
}

CountDownLatch::CountDownLatch(std::shared_ptr<detail::LockService> service, std::string name)
    : service_(std::move(service)),
      name_(std::move(name)),
      // Redisson's name, also for a name with its own hash tag, whose channel then hashes
      // elsewhere: the scripts take it as an argument, not a key, so that on a Redis Cluster
      // they still run on the node of the count.
      channel_("redisson_countdownlatch__channel__{" + name_ + "}") {}

bool CountDownLatch::try_set_count(int64_t count) {
  if (count < 0) throw std::invalid_argument("a latch's count must not be negative");
  return service_->client()
             .eval_sha(try_set_script(), {name_},
                       {kNewCountMessage, std::to_string(count), channel_})
             .integer() == 1;
}

void CountDownLatch::count_down() {
  service_->client().eval_sha(count_down_script(), {name_}, {kZeroCountMessage, channel_});
}

int64_t CountDownLatch::get_count() {
  Reply reply = service_->client().command_on_primary("GET", name_);
  return reply.is_null() ? 0 : std::stoll(reply.str());
}

void CountDownLatch::await() {
  detail::wait_for(*service_, channel_, Clock::time_point::max(), [&]() -> std::optional<int64_t> {
    if (get_count() <= 0) return std::nullopt;
    return -1;  // only a message can change the answer
  });
}

bool CountDownLatch::await(Milliseconds timeout) {
  const Clock::time_point end = Clock::now() + std::max(Milliseconds(0), timeout);
  return detail::wait_for(*service_, channel_, end, [&]() -> std::optional<int64_t> {
    if (get_count() <= 0) return std::nullopt;
    return -1;
  });
}

bool CountDownLatch::delete_latch() {
  return service_->client()
             .eval_sha(delete_script(), {name_}, {kNewCountMessage, channel_})
             .integer() == 1;
}

}  // namespace keywarden
