// pool_size connections to one server; a caller borrows a free one (waiting up to the command
// timeout when all are busy) and gives it back when its round trip ends, broken or not: a
// broken one is closed and reopens on its next use. A Client has one pool, or one per node of
// a Redis Cluster.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "client/connection.h"
#include "keywarden/errors.h"
#include "keywarden/options.h"

namespace keywarden::detail {

class ConnectionPool {
 public:
  // `options` (and `epoch`, the SentinelWatch epoch its connections follow, when given) must
  // outlive the pool. With `replicas`, the connections go to replicas fit for reads (through
  // Sentinel; the primary when there is none).
  explicit ConnectionPool(const ClientOptions& options,
                          const std::atomic<uint64_t>* epoch = nullptr, bool replicas = false)
      : options_(options) {
    size_t size = options.pool_size == 0 ? 1 : options.pool_size;
    for (size_t i = 0; i < size; ++i) {
      connections_.push_back(std::make_unique<Connection>(options_));
      connections_.back()->follow(epoch);
      if (replicas) connections_.back()->prefer_replica();
      free_.push_back(connections_.back().get());
    }
  }

  class Lease {
   public:
    Lease(ConnectionPool& pool, Connection* connection) : pool_(pool), connection_(connection) {}
    ~Lease() { pool_.give_back(connection_); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Connection& operator*() const { return *connection_; }
    Connection* operator->() const { return connection_; }

   private:
    ConnectionPool& pool_;
    Connection* connection_;
  };

  Lease borrow() {
    std::unique_lock lock(mutex_);
    auto available = [this] { return !free_.empty(); };
    if (options_.command_timeout.count() > 0) {
      if (!available_.wait_for(lock, options_.command_timeout, available)) {
        throw TimeoutError("no free connection in the pool within the command timeout");
      }
    } else {
      available_.wait(lock, available);
    }
    Connection* connection = free_.back();
    free_.pop_back();
    return Lease(*this, connection);
  }

 private:
  void give_back(Connection* connection) {
    {
      std::lock_guard lock(mutex_);
      free_.push_back(connection);
    }
    available_.notify_one();
  }

  const ClientOptions& options_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::mutex mutex_;
  std::condition_variable available_;
  std::vector<Connection*> free_;
};

}  // namespace keywarden::detail
