#include "common/clock.h"

#include <ctime>

namespace keywarden {
namespace {
int64_t read_us(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return int64_t{ts.tv_sec} * 1'000'000 + ts.tv_nsec / 1000;
}
}  // namespace

int64_t SystemClock::wall_ms() const { return read_us(CLOCK_REALTIME) / 1000; }
int64_t SystemClock::wall_us() const { return read_us(CLOCK_REALTIME); }
int64_t SystemClock::monotonic_us() const { return read_us(CLOCK_MONOTONIC); }

ClockReading SystemClock::read() const {
  const int64_t monotonic = read_us(CLOCK_MONOTONIC);
  if (monotonic - offset_measured_at_us_.load(std::memory_order_relaxed) >= kOffsetRefreshUs) {
    wall_offset_us_.store(read_us(CLOCK_REALTIME) - monotonic, std::memory_order_relaxed);
    offset_measured_at_us_.store(monotonic, std::memory_order_relaxed);
  }
  return {(monotonic + wall_offset_us_.load(std::memory_order_relaxed)) / 1000, monotonic};
}

}  // namespace keywarden
