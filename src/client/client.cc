// Client, Pipeline, Script and the connection pool behind them (see keywarden/client.h).
#include "keywarden/client.h"

#include <charconv>
#include <cmath>
#include <condition_variable>
#include <mutex>

#include "client/connection.h"
#include "client/reply_convert.h"
#include "common/sha1.h"

namespace keywarden {

namespace detail {

std::string format_double_argument(double value) {
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char text[64];
  auto result = std::to_chars(text, text + sizeof(text), value);
  return std::string(text, result.ptr);
}

// pool_size connections; a caller borrows a free one (waiting up to the command timeout when
// all are busy) and gives it back when its round trip ends, broken or not: a broken one is
// closed and reopens on its next use.
class ConnectionPool {
 public:
  explicit ConnectionPool(const ClientOptions& options) : options_(options) {
    size_t size = options.pool_size == 0 ? 1 : options.pool_size;
    for (size_t i = 0; i < size; ++i) {
      connections_.push_back(std::make_unique<Connection>(options_));
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

}  // namespace detail

Pipeline& Pipeline::add(std::initializer_list<std::string_view> args) {
  detail::encode_command(encoded_, std::vector<std::string_view>(args));
  ++count_;
  return *this;
}

Pipeline& Pipeline::add(const std::vector<std::string>& args) {
  detail::encode_command(encoded_, args);
  ++count_;
  return *this;
}

std::vector<Reply> Pipeline::exec() {
  std::string encoded = std::move(encoded_);
  size_t count = count_;
  encoded_.clear();
  count_ = 0;
  if (count == 0) return {};
  return client_->round_trip(encoded, count);
}

Script::Script(std::string source) : source_(std::move(source)), sha_(sha1_hex(source_)) {}

Client::Client(ClientOptions options) : options_(std::move(options)) {
  if (options_.resp != 2 && options_.resp != 3) {
    throw Error("ClientOptions::resp must be 2 or 3, not " + std::to_string(options_.resp));
  }
  pool_ = std::make_unique<detail::ConnectionPool>(options_);
}

Client::~Client() = default;

std::vector<Reply> Client::round_trip(const std::string& encoded, size_t count) {
  auto lease = pool_->borrow();
  std::vector<RespValue> values = lease->round_trip(encoded, count);
  std::vector<Reply> replies;
  replies.reserve(values.size());
  for (RespValue& value : values) replies.push_back(detail::to_reply(std::move(value)));
  return replies;
}

Reply Client::command(std::initializer_list<std::string_view> args) {
  std::string encoded;
  detail::encode_command(encoded, std::vector<std::string_view>(args));
  Reply reply = std::move(round_trip(encoded, 1).front());
  if (reply.is_error()) throw ServerError(reply.str());
  return reply;
}

Reply Client::command(const std::vector<std::string>& args) {
  std::string encoded;
  detail::encode_command(encoded, args);
  Reply reply = std::move(round_trip(encoded, 1).front());
  if (reply.is_error()) throw ServerError(reply.str());
  return reply;
}

std::vector<Reply> Client::transaction(const std::function<void(Pipeline&)>& body) {
  Pipeline queued(*this);
  body(queued);
  std::string encoded;
  detail::encode_command(encoded, std::vector<std::string_view>{"MULTI"});
  encoded += queued.encoded_;
  detail::encode_command(encoded, std::vector<std::string_view>{"EXEC"});
  std::vector<Reply> replies = round_trip(encoded, queued.count_ + 2);
  if (replies.front().is_error()) throw ServerError(replies.front().str());
  Reply& exec = replies.back();
  if (exec.is_error()) throw ServerError(exec.str());
  // A null EXEC means a WATCHed key changed: nothing ran.
  if (exec.is_null()) return {};
  return exec.elements();
}

namespace {

std::string encode_evalsha(const Script& script, const std::vector<std::string>& keys,
                           const std::vector<std::string>& args) {
  std::vector<std::string> command_args{"EVALSHA", script.sha(), std::to_string(keys.size())};
  command_args.insert(command_args.end(), keys.begin(), keys.end());
  command_args.insert(command_args.end(), args.begin(), args.end());
  std::string encoded;
  detail::encode_command(encoded, command_args);
  return encoded;
}

}  // namespace

Reply Client::eval_sha(const Script& script, const std::vector<std::string>& keys,
                       const std::vector<std::string>& args) {
  const std::string encoded = encode_evalsha(script, keys, args);
  Reply reply = std::move(round_trip(encoded, 1).front());
  if (reply.is_error() && reply.error_code() == "NOSCRIPT") {
    command({"SCRIPT", "LOAD", script.source()});
    reply = std::move(round_trip(encoded, 1).front());
  }
  if (reply.is_error()) throw ServerError(reply.str());
  return reply;
}

std::pair<Reply, int64_t> Client::eval_sha_and_wait(const Script& script,
                                                    const std::vector<std::string>& keys,
                                                    const std::vector<std::string>& args,
                                                    int replicas,
                                                    std::chrono::milliseconds timeout) {
  std::string encoded = encode_evalsha(script, keys, args);
  detail::encode_command(encoded, std::vector<std::string>{"WAIT", std::to_string(replicas),
                                                           std::to_string(timeout.count())});
  std::vector<Reply> replies = round_trip(encoded, 2);
  if (replies[0].is_error() && replies[0].error_code() == "NOSCRIPT") {
    command({"SCRIPT", "LOAD", script.source()});
    replies = round_trip(encoded, 2);
  }
  for (const Reply& reply : replies) {
    if (reply.is_error()) throw ServerError(reply.str());
  }
  return {std::move(replies[0]), replies[1].integer()};
}

}  // namespace keywarden
