// shared_counter: many processes add to one counter stored on a keywarden (or Redis) server,
// and none of their updates may be lost. Each increment is a read-modify-write done by the
// client (GET, add one, SET), which on its own would lose updates when two processes
// interleave; a keywarden::Lock around it lets one process at a time in. Waiting processes
// sleep until the holder's release message arrives; the lock's watchdog keeps the lease alive
// while a holder works, and should the lease be lost anyway (a long pause, a failover) the
// holder is told through on_lost and checks valid() before it writes.
//
// Usage: shared_counter [--host H] [--port P] [--key K] [--count N]
// Prints "done <increments> lost <times the lock was lost>" on success.
#include <keywarden/keywarden.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace {

struct Arguments {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string key = "shared_counter";
  int count = 100;
};

bool parse_arguments(int argc, char** argv, Arguments& out) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const char* flag = argv[i];
    const char* value = argv[i + 1];
    if (std::strcmp(flag, "--host") == 0) {
      out.host = value;
    } else if (std::strcmp(flag, "--port") == 0) {
      out.port = std::atoi(value);
    } else if (std::strcmp(flag, "--key") == 0) {
      out.key = value;
    } else if (std::strcmp(flag, "--count") == 0) {
      out.count = std::atoi(value);
    } else {
      return false;
    }
  }
  return argc % 2 == 1;
}

// One increment under the lock; false when the lock was lost before the write could be made
// safely (the increment is then retried by the caller).
bool increment(keywarden::Client& client, keywarden::Lock& lock, const std::string& key) {
  std::lock_guard<keywarden::Lock> guard(lock);
  keywarden::Reply current = client.command("GET", key);
  int64_t value = current.is_null() ? 0 : std::stoll(current.str());
  if (!lock.valid()) return false;  // someone else may hold it now: do not write
  client.command("SET", key, value + 1);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Arguments arguments;
  if (!parse_arguments(argc, argv, arguments)) {
    std::fprintf(stderr, "usage: %s [--host H] [--port P] [--key K] [--count N]\n", argv[0]);
    return 2;
  }
  keywarden::ClientOptions options;
  options.host = arguments.host;
  options.port = arguments.port;
  try {
    keywarden::Client client(options);
    keywarden::Lock lock = client.get_lock(arguments.key + ":lock");
    std::atomic<int> lost{0};
    lock.on_lost([&](keywarden::LockLostReason reason) {
      ++lost;
      std::fprintf(stderr, "shared_counter: lock lost (%s)\n", keywarden::to_string(reason));
    });
    for (int done = 0; done < arguments.count;) {
      if (increment(client, lock, arguments.key)) ++done;
    }
    std::printf("done %d lost %d\n", arguments.count, lost.load());
  } catch (const keywarden::Error& error) {
    std::fprintf(stderr, "shared_counter: %s\n", error.what());
    return 1;
  }
  return 0;
}
