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

}  // namespace keywarden
