// The injectable clock. Redis defines expiry in Unix wall-clock milliseconds (EXPIREAT, PXAT,
// TTL replies), while durations (timeouts, latency, CPU budgets) must come from a monotonic
// source that never jumps. Both sit behind one interface so that tests drive expiry by
// advancing a ManualClock instead of sleeping.
//
// Invariant: monotonic_us() never decreases. wall_ms() may jump (the system clock can be set),
// and callers that compare deadlines tolerate that, exactly as Redis does.
#pragma once

#include <atomic>
#include <climits>
#include <cstdint>

namespace keywarden {

// Both times from one reading, for callers that need both (the dispatcher, per command).
struct ClockReading {
  int64_t wall_ms;
  int64_t monotonic_us;
};

class Clock {
 public:
  virtual ~Clock() = default;
  virtual ClockReading read() const { return {wall_ms(), monotonic_us()}; }
  // Unix time in milliseconds.
  virtual int64_t wall_ms() const = 0;
  // Unix time in microseconds (TIME, SLOWLOG timestamps).
  virtual int64_t wall_us() const = 0;
  // Microseconds from an arbitrary fixed origin; never goes backwards.
  virtual int64_t monotonic_us() const = 0;
};

class SystemClock final : public Clock {
 public:
  int64_t wall_ms() const override;
  int64_t wall_us() const override;
  int64_t monotonic_us() const override;
  // One monotonic read; the wall time is derived from an offset to the monotonic clock that is
  // re-measured every kOffsetRefreshUs, so a step of the system clock shows within that time.
  // It saves a system-clock read per command on the hot path.
  ClockReading read() const override;

 private:
  static constexpr int64_t kOffsetRefreshUs = 50'000;
  mutable std::atomic<int64_t> wall_offset_us_{0};
  mutable std::atomic<int64_t> offset_measured_at_us_{INT64_MIN / 2};
};

// A clock that only moves when told to. Wall and monotonic time advance together.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_wall_ms = 1'700'000'000'000)
      : wall_us_(start_wall_ms * 1000) {}
  int64_t wall_ms() const override { return wall_us_.load() / 1000; }
  int64_t wall_us() const override { return wall_us_.load(); }
  int64_t monotonic_us() const override { return monotonic_us_.load(); }
  void advance_ms(int64_t ms) { advance_us(ms * 1000); }
  void advance_us(int64_t us) {
    wall_us_ += us;
    monotonic_us_ += us;
  }
  void set_wall_ms(int64_t ms) { wall_us_ = ms * 1000; }

 private:
  std::atomic<int64_t> wall_us_;
  std::atomic<int64_t> monotonic_us_{1'000'000};
};

}  // namespace keywarden
