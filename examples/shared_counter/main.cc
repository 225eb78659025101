// shared_counter: many processes add to one counter stored on a keywarden (or Redis) server,
// and none of their updates may be lost. Each increment is a read-modify-write done by the
// client (GET, add one, SET), which on its own would lose updates when two processes
// interleave; it is made safe with an optimistic transaction: WATCH the key, read it, and
// write it in MULTI/EXEC, which the server refuses (a null EXEC) if another client changed
// the key in between, in which case we read again and retry.
//
// Usage: shared_counter [--host H] [--port P] [--key K] [--count N]
// Prints "done <increments> retries <retries>" on success.
#include <keywarden/keywarden.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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

// One safe increment; returns how many times it had to retry.
int64_t increment(keywarden::Client& client, const std::string& key) {
  // TODO(lock): once keywarden::Lock lands, this whole function becomes
  //   auto lock = client.get_lock(key + ":lock");
  //   std::lock_guard guard(lock);
  //   set key to GET key + 1
  // with no retry loop: the lock excludes the other processes instead of WATCH detecting them.
  for (int64_t retries = 0;; ++retries) {
    // WATCH, GET and the MULTI/EXEC must use the same connection: the client's pool holds
    // exactly one (pool_size = 1) and this program uses it from one thread only.
    client.command("WATCH", key);
    keywarden::Reply current = client.command("GET", key);
    int64_t value = current.is_null() ? 0 : std::stoll(current.str());
    std::vector<keywarden::Reply> results = client.transaction(
        [&](keywarden::Pipeline& multi) { multi.add("SET", key, value + 1); });
    if (!results.empty()) return retries;  // empty: the key changed after WATCH; try again
  }
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
  options.pool_size = 1;
  try {
    keywarden::Client client(options);
    int64_t retries = 0;
    for (int i = 0; i < arguments.count; ++i) retries += increment(client, arguments.key);
    std::printf("done %d retries %lld\n", arguments.count, static_cast<long long>(retries));
  } catch (const keywarden::Error& error) {
    std::fprintf(stderr, "shared_counter: %s\n", error.what());
    return 1;
  }
  return 0;
}
