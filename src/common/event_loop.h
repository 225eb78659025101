// The epoll loop of the command thread. File descriptors register a handler for readiness;
// one periodic timer drives the server cron; a before-sleep hook runs after every batch of
// events, where replies are flushed and the fast expiry cycle runs, so that everything a batch
// produced leaves in as few write calls as possible before the thread waits again.
//
// Handlers are reached through the epoll event itself (no lookup per event). A handler must
// stay alive until the batch that may still report it is over: owners close their descriptor
// and unwatch at once, but destroy the handler only from the before-sleep hook or later.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace keywarden {

class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void on_events(uint32_t events) = 0;
};

// One descriptor's readiness in a batch, as handed to the batch hook.
struct ReadyEvent {
  EventHandler* handler;
  uint32_t events;  // EventLoop::Events bits
};

class EventLoop {
 public:
  enum Events : uint32_t { kReadable = 1, kWritable = 2 };

  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  bool ok() const { return epoll_fd_ >= 0; }
  bool watch(int fd, uint32_t events, EventHandler* handler);
  bool update(int fd, uint32_t events, EventHandler* handler);
  void unwatch(int fd);

  void set_before_sleep(std::function<void()> hook) { before_sleep_ = std::move(hook); }
  // Sees each batch of run() before its handlers are called (the I/O threads read the
  // readable connections of the batch there); unset, a batch costs nothing more.
  void set_batch_hook(std::function<void(std::span<const ReadyEvent>)> hook) {
    batch_hook_ = std::move(hook);
  }
  // Calls `tick` every `period_us` of monotonic time (the cron).
  void set_timer(int64_t period_us, std::function<void()> tick);
  void set_timer_period(int64_t period_us) { timer_period_us_ = period_us; }
  // Wakes the next wait no later than `monotonic_us` (a blocked client's deadline); set again
  // before every wait by whoever needs it (before_sleep).
  void wake_by(int64_t monotonic_us) {
    if (wake_by_us_ == 0 || monotonic_us < wake_by_us_) wake_by_us_ = monotonic_us;
  }

  // Runs until stop().
  void run();
  void stop() { running_ = false; }
  bool stopping() const { return !running_; }
  // Waits at most timeout_ms for events and hands them to their handlers, without the
  // before-sleep hook or the timer: how a long script lets other clients be answered.
  void poll_once(int timeout_ms);
  // Whether the last wait of run() reported any descriptor ready (clients are being served).
  bool last_wait_had_events() const { return last_wait_had_events_; }

 private:
  int epoll_fd_;
  std::atomic<bool> running_ = false;  // cleared from signal handlers too
  std::function<void()> before_sleep_;
  std::function<void(std::span<const ReadyEvent>)> batch_hook_;
  std::function<void()> timer_;
  int64_t timer_period_us_ = 100'000;
  int64_t next_timer_us_ = 0;
  int64_t wake_by_us_ = 0;  // 0: no early wake wanted
  bool last_wait_had_events_ = false;
  std::vector<ReadyEvent> ready_;  // the batch handed to batch_hook_
};

int64_t monotonic_now_us();

}  // namespace keywarden
