#include "common/event_loop.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <vector>

namespace keywarden {
namespace {
epoll_event make_event(uint32_t events, EventHandler* handler) {
  epoll_event event{};
  if (events & EventLoop::kReadable) event.events |= EPOLLIN;
  if (events & EventLoop::kWritable) event.events |= EPOLLOUT;
  event.data.ptr = handler;
  return event;
}
uint32_t ready_bits(const epoll_event& event) {
  uint32_t ready = 0;
  if (event.events & (EPOLLIN | EPOLLHUP | EPOLLERR)) ready |= EventLoop::kReadable;
  if (event.events & EPOLLOUT) ready |= EventLoop::kWritable;
  return ready;
}
}  // namespace

int64_t monotonic_now_us() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000 + ts.tv_nsec / 1000;
}

EventLoop::EventLoop() : epoll_fd_(epoll_create1(EPOLL_CLOEXEC)) {}

EventLoop::~EventLoop() {
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

bool EventLoop::watch(int fd, uint32_t events, EventHandler* handler) {
  epoll_event event = make_event(events, handler);
  return epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) == 0;
}

bool EventLoop::update(int fd, uint32_t events, EventHandler* handler) {
  epoll_event event = make_event(events, handler);
  return epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &event) == 0;
}

void EventLoop::unwatch(int fd) { epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr); }

void EventLoop::set_timer(int64_t period_us, std::function<void()> tick) {
  timer_period_us_ = period_us;
  timer_ = std::move(tick);
  next_timer_us_ = monotonic_now_us() + period_us;
}

void EventLoop::poll_once(int timeout_ms) {
  epoll_event events[64];
  int count = epoll_wait(epoll_fd_, events, 64, timeout_ms);
  for (int i = 0; i < count; ++i) {
    static_cast<EventHandler*>(events[i].data.ptr)->on_events(ready_bits(events[i]));
  }
}

void EventLoop::run() {
  running_ = true;
  std::vector<epoll_event> events(1024);
  while (running_) {
    if (before_sleep_) before_sleep_();
    if (!running_) break;
    int timeout_ms = -1;
    int64_t wake_us = timer_ ? next_timer_us_ : 0;
    if (wake_by_us_ != 0 && (wake_us == 0 || wake_by_us_ < wake_us)) wake_us = wake_by_us_;
    wake_by_us_ = 0;
    if (wake_us != 0) {
      int64_t wait_us = wake_us - monotonic_now_us();
      timeout_ms = static_cast<int>(std::max<int64_t>(0, (wait_us + 999) / 1000));
    }
    int count = epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), timeout_ms);
    if (count < 0 && errno != EINTR) break;
    last_wait_had_events_ = count > 0;
    if (batch_hook_ && count > 1) {
      ready_.clear();
      for (int i = 0; i < count; ++i) {
        ready_.push_back({static_cast<EventHandler*>(events[i].data.ptr), ready_bits(events[i])});
      }
      batch_hook_(ready_);
      for (const ReadyEvent& event : ready_) event.handler->on_events(event.events);
    } else {
      for (int i = 0; i < count; ++i) {
        static_cast<EventHandler*>(events[i].data.ptr)->on_events(ready_bits(events[i]));
      }
    }
    if (timer_ && monotonic_now_us() >= next_timer_us_) {
      next_timer_us_ = monotonic_now_us() + timer_period_us_;
      timer_();
    }
  }
}

}  // namespace keywarden
