// MultiLock (see keywarden/multi_lock.h): all-or-nothing over several Locks, never waiting
// while holding a member, so overlapping MultiLocks cannot deadlock.
#include "keywarden/multi_lock.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

#include "keywarden/client.h"

namespace keywarden {

namespace {

using Clock = std::chrono::steady_clock;

// A few random milliseconds, growing with the rounds lost, capped at 10 ms.
std::chrono::milliseconds jitter(int rounds) {
  thread_local std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> pick(0, std::min(rounds, 10));
  return std::chrono::milliseconds(pick(rng));
}

}  // namespace

MultiLock Client::get_multi_lock(const std::vector<std::string>& names) {
  // Two handles of one name exclude each other, so a duplicate could never be acquired.
  std::set<std::string> seen(names.begin(), names.end());
  if (seen.size() != names.size()) {
    throw std::invalid_argument("get_multi_lock: a name is given twice");
  }
  std::vector<Lock> locks;
  locks.reserve(names.size());
  for (const std::string& name : names) locks.push_back(get_lock(name));
  return MultiLock(std::move(locks));
}

MultiLock::MultiLock(std::vector<Lock> locks)
    : locks_(std::move(locks)), shared_(std::make_unique<Shared>()) {
  if (locks_.empty()) throw std::invalid_argument("MultiLock needs at least one lock");
}

MultiLock::MultiLock(MultiLock&&) noexcept = default;

MultiLock& MultiLock::operator=(MultiLock&& other) noexcept {
  if (this != &other) {
    // The members' destructors release what this one still holds.
    locks_ = std::move(other.locks_);
    shared_ = std::move(other.shared_);
  }
  return *this;
}

MultiLock::~MultiLock() = default;

void MultiLock::report(const std::exception& error) noexcept {
  std::function<void(const std::exception&)> callback;
  {
    std::lock_guard<std::mutex> guard(shared_->mutex);
    callback = shared_->on_error;
  }
  if (callback) {
    try {
      callback(error);
    } catch (...) {
    }
  } else {
    std::fprintf(stderr, "keywarden: multi-lock: %s\n", error.what());
  }
}

void MultiLock::release_taken(const std::vector<size_t>& taken) noexcept {
  for (size_t index : taken) {
    try {
      locks_[index].unlock();
    } catch (const std::exception& error) {
      report(error);
    }
  }
}

bool MultiLock::acquire(std::optional<Milliseconds> wait, std::optional<Milliseconds> lease) {
  if (lease && lease->count() <= 0) throw std::invalid_argument("lock lease must be positive");
  const bool unbounded = !wait.has_value();
  const Clock::time_point end =
      unbounded ? Clock::time_point::max() : Clock::now() + std::max(Milliseconds(0), *wait);
  auto left = [&] {
    return std::chrono::ceil<Milliseconds>(std::max(Clock::duration::zero(), end - Clock::now()));
  };
  // One immediate attempt on a member.
  auto try_member = [&](Lock& member) {
    return lease ? member.try_lock(Milliseconds(0), *lease) : member.try_lock();
  };
  // Waits for one member alone (nothing else held), up to the time left.
  auto wait_member = [&](Lock& member) {
    if (unbounded) {
      if (lease)
        member.lock(*lease);
      else
        member.lock();
      return true;
    }
    Milliseconds remaining = left();
    if (remaining.count() <= 0) return false;
    return lease ? member.try_lock(remaining, *lease) : member.try_lock_for(remaining);
  };

  std::vector<size_t> taken;
  std::vector<bool> held(locks_.size(), false);
  int rounds = 0;
  try {
    for (;;) {
      // Take every member not yet held, in order, without waiting.
      std::optional<size_t> busy;
      for (size_t i = 0; i < locks_.size() && !busy; ++i) {
        if (held[i]) continue;
        if (try_member(locks_[i])) {
          held[i] = true;
          taken.push_back(i);
        } else {
          busy = i;
        }
      }
      if (!busy) {
        // An acquisition slower than an explicit lease may have let a member run out.
        bool all_valid = std::all_of(locks_.begin(), locks_.end(),
                                     [](const Lock& member) { return member.valid(); });
        if (all_valid) break;
      }
      release_taken(taken);
      taken.clear();
      std::fill(held.begin(), held.end(), false);
      if (!unbounded && Clock::now() >= end) return false;
      if (!busy) continue;
      // Symmetric contenders that keep losing to each other get out of step.
      if (++rounds > 1) std::this_thread::sleep_for(jitter(rounds));
      if (!wait_member(locks_[*busy])) return false;
      held[*busy] = true;
      taken.push_back(*busy);
    }
  } catch (...) {
    release_taken(taken);
    throw;
  }
  std::lock_guard<std::mutex> guard(shared_->mutex);
  ++shared_->holds;
  return true;
}

void MultiLock::lock() { acquire(std::nullopt, std::nullopt); }

void MultiLock::lock(Milliseconds lease) { acquire(std::nullopt, lease); }

bool MultiLock::try_lock() { return acquire(Milliseconds(0), std::nullopt); }

void MultiLock::unlock() {
  {
    std::lock_guard<std::mutex> guard(shared_->mutex);
    if (shared_->holds == 0) {
      throw NotOwnerError("attempt to unlock a multi-lock not held by this handle");
    }
    --shared_->holds;
  }
  for (Lock& member : locks_) {
    try {
      member.unlock();
    } catch (const std::exception& error) {
      report(error);
    }
  }
}

bool MultiLock::valid() const {
  {
    std::lock_guard<std::mutex> guard(shared_->mutex);
    if (shared_->holds == 0) return false;
  }
  return std::all_of(locks_.begin(), locks_.end(),
                     [](const Lock& member) { return member.valid(); });
}

std::chrono::steady_clock::duration MultiLock::remaining() const {
  {
    std::lock_guard<std::mutex> guard(shared_->mutex);
    if (shared_->holds == 0) return Clock::duration::zero();
  }
  Clock::duration least = Clock::duration::max();
  for (const Lock& member : locks_) least = std::min(least, member.remaining());
  return least;
}

void MultiLock::on_lost(MemberLostCallback callback) {
  auto shared = std::make_shared<MemberLostCallback>(std::move(callback));
  for (Lock& member : locks_) {
    member.on_lost([shared, name = member.name()](LockLostReason reason) {
      if (*shared) (*shared)(name, reason);
    });
  }
}

void MultiLock::on_error(std::function<void(const std::exception&)> callback) {
  {
    std::lock_guard<std::mutex> guard(shared_->mutex);
    shared_->on_error = callback;
  }
  for (Lock& member : locks_) member.on_error(callback);
}

}  // namespace keywarden
