// lock_bench: the C++ half of bench/lock_benchmark.py, timing keywarden::Lock against one
// server. It prints one JSON line on stdout; the driver runs it on keywarden-server and on
// redis-server and puts the figures side by side.
//
//   lock_bench uncontended --port P [--cycles N] [--warmup N] [--name NAME]
//     One thread, one Client, one handle, watchdog lease: N lock()+unlock() cycles after the
//     warm-up; prints the cycles per second.
//   lock_bench handoff --port P [--contenders 8] [--seconds S] [--name NAME] [--events FILE]
//     Each contender is a thread with its own Client and handle, looping lock() -> GET/SET of
//     a counter key (the critical section) -> unlock() [-> sleep N µs outside the lock] until
//     S seconds have passed. Every cycle is recorded as (contender, lock() called, lock()
//     returned, just before unlock()); --events writes them, one line each, in CLOCK_MONOTONIC
//     nanoseconds (std::steady_clock on Linux), the clock the Python contenders of the driver
//     use too, so that the driver computes the hand-off latencies of both the same way. Prints
//     the correctness counters: the counter must end equal to the cycles, and no contender may
//     find another inside.
//   lock_bench fenced-names --port P [--names N] [--contenders 4] [--name PREFIX]
//                           [--per-name-counter]
//     Each contender is a thread with its own Client that takes and releases FencedLock
//     `PREFIX:<i>` for its share of N distinct names, checking that every token is positive.
//     Prints the acquisitions per second and
//     the server's key count once the releases' short-lived unlock latches have expired
//     (command timeout 500 ms, so they live 1 s): what the counters leave behind for good.
//     --per-name-counter selects Redisson's counter layout.
//   lock_bench grant-latency --port P [--cycles N] [--warmup N] [--replicas R] [--name NAME]
//     One thread, one handle requiring R replicas (Lock::require_replicas, 1 s timeout; 0: off):
//     N lock()+unlock() cycles; prints p50/p99/max of the time lock() took, in microseconds.
//     For bench/lock_failover_benchmark.py (a primary with one replica).
//   lock_bench failover --sentinel-port P [--master NAME] [--contenders N] [--seconds S]
//                       [--replicas R] [--hold-ms H] [--lease-ms L] [--name NAME]
//                       [--until-stdin-closes]
//     Holders and waiters through a Sentinel-named primary while bench/lock_failover_benchmark.py
//     kills it or fails it over: each contender (own Client, own handle requiring R replicas,
//     watchdog lease L) loops lock() -> H ms inside -> unlock(). A grant is a violation when
//     another contender is still inside with a hold that is valid by its own account (not told
//     on_lost, Lock::valid()). Prints grants, violations, the holds reported through on_lost,
//     grants refused as not durable, and other errors (which the contender waits out).
//     With --until-stdin-closes it also stops when its standard input reaches its end (the
//     driver closes it once its failovers are done).
#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "keywarden/keywarden.h"

namespace {

using keywarden::Client;
using keywarden::ClientOptions;
using keywarden::Lock;
using keywarden::Reply;
using Clock = std::chrono::steady_clock;

struct Arguments {
  std::string mode;
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string name = "lock_bench";
  int64_t cycles = 20000;
  int64_t warmup = 2000;
  int contenders = 8;
  double seconds = 5.0;
  int64_t outside_us = 0;
  std::string events_path;
  int64_t names = 100000;
  bool per_name_counter = false;
  int replicas = 0;
  int sentinel_port = 0;
  std::string master = "mymaster";
  int64_t hold_ms = 5;
  int64_t lease_ms = 5000;
  bool until_stdin_closes = false;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "lock_bench: %s\n"
               "usage: lock_bench uncontended --port P [--host H] [--cycles N] [--warmup N] "
               "[--name NAME]\n"
               "       lock_bench handoff --port P [--host H] [--contenders N] [--seconds S] "
               "[--name NAME] [--events FILE] [--outside-us N]\n"
               "       lock_bench fenced-names --port P [--host H] [--names N] "
               "[--contenders N] [--name PREFIX] [--per-name-counter]\n"
               "       lock_bench grant-latency --port P [--host H] [--cycles N] [--warmup N] "
               "[--replicas R] [--name NAME]\n"
               "       lock_bench failover --sentinel-port P [--master NAME] [--contenders N] "
               "[--seconds S] [--replicas R] [--hold-ms H] [--lease-ms L] [--name NAME] "
               "[--until-stdin-closes]\n",
               why);
  std::exit(64);
}

Arguments parse_arguments(int argc, char** argv) {
  if (argc < 2) usage("no mode");
  Arguments a;
  a.mode = argv[1];
  if (a.mode != "uncontended" && a.mode != "handoff" && a.mode != "fenced-names" &&
      a.mode != "grant-latency" && a.mode != "failover") {
    usage("unknown mode");
  }
  for (int i = 2; i < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--per-name-counter" || flag == "--until-stdin-closes") {
      (flag == "--per-name-counter" ? a.per_name_counter : a.until_stdin_closes) = true;
      --i;
      continue;
    }
    if (i + 1 >= argc) usage("a flag without its value");
    const char* value = argv[i + 1];
    if (flag == "--host") a.host = value;
    else if (flag == "--port") a.port = std::atoi(value);
    else if (flag == "--name") a.name = value;
    else if (flag == "--cycles") a.cycles = std::atoll(value);
    else if (flag == "--warmup") a.warmup = std::atoll(value);
    else if (flag == "--contenders") a.contenders = std::atoi(value);
    else if (flag == "--seconds") a.seconds = std::atof(value);
    else if (flag == "--events") a.events_path = value;
    else if (flag == "--outside-us") a.outside_us = std::atoll(value);
    else if (flag == "--names") a.names = std::atoll(value);
    else if (flag == "--replicas") a.replicas = std::atoi(value);
    else if (flag == "--sentinel-port") a.sentinel_port = std::atoi(value);
    else if (flag == "--master") a.master = value;
    else if (flag == "--hold-ms") a.hold_ms = std::atoll(value);
    else if (flag == "--lease-ms") a.lease_ms = std::atoll(value);
    else usage("unknown flag");
  }
  if (a.port <= 0 || a.cycles <= 0 || a.warmup < 0 || a.contenders <= 0 || a.seconds <= 0 ||
      a.outside_us < 0 || a.names <= 0 || a.replicas < 0 || a.hold_ms < 0 || a.lease_ms <= 0 ||
      (a.mode == "failover" && a.sentinel_port <= 0)) {
    usage("a value out of range");
  }
  return a;
}

ClientOptions client_options(const Arguments& a) {
  ClientOptions o;
  o.host = a.host;
  o.port = a.port;
  o.fencing_counter_per_name = a.per_name_counter;
  if (a.sentinel_port > 0) {
    o.sentinel.addresses.emplace_back(a.host, a.sentinel_port);
    o.sentinel.master_name = a.master;
  }
  return o;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

int run_uncontended(const Arguments& a) {
  Client client(client_options(a));
  Lock lock = client.get_lock(a.name);
  client.command("DEL", a.name);
  for (int64_t i = 0; i < a.warmup; ++i) {
    lock.lock();
    lock.unlock();
  }
  const auto start = Clock::now();
  for (int64_t i = 0; i < a.cycles; ++i) {
    lock.lock();
    lock.unlock();
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  // Left held or left behind would mean an unlock that did not happen.
  const bool released = client.command("EXISTS", a.name).integer() == 0;
  std::printf(
      "{\"mode\": \"uncontended\", \"cycles\": %lld, \"seconds\": %.6f, "
      "\"cycles_per_second\": %.1f, \"released\": %s}\n",
      static_cast<long long>(a.cycles), elapsed, a.cycles / elapsed, released ? "true" : "false");
  return released ? 0 : 2;
}

struct Cycle {
  int contender;
  int64_t called_ns;    // lock() called
  int64_t acquired_ns;  // lock() returned
  int64_t release_ns;   // just before unlock() sends the release
};

int run_handoff(const Arguments& a) {
  const std::string counter_key = a.name + ":counter";
  {
    Client setup(client_options(a));
    setup.command("DEL", a.name, counter_key);
  }
  std::vector<std::vector<Cycle>> cycles(a.contenders);
  std::atomic<int> inside{0};
  std::atomic<int64_t> overlaps{0};
  std::atomic<int64_t> deadline_ns{0};
  int64_t start_ns = 0;
  std::atomic<int> failures{0};
  std::mutex error_mutex;
  std::string first_error;
  // Every contender connects first, so no one starts while another is still connecting; the
  // clock starts when the last one is ready.
  auto start_clock = [&]() noexcept {
    start_ns = now_ns();
    deadline_ns = start_ns + static_cast<int64_t>(a.seconds * 1e9);
  };
  std::barrier start_line(a.contenders + 1, start_clock);

  std::vector<std::thread> threads;
  for (int id = 0; id < a.contenders; ++id) {
    threads.emplace_back([&, id] {
      bool arrived = false;
      try {
        Client client(client_options(a));
        Lock lock = client.get_lock(a.name);
        client.command("PING");
        start_line.arrive_and_wait();
        arrived = true;
        std::vector<Cycle>& mine = cycles[id];
        mine.reserve(1 << 16);
        while (now_ns() < deadline_ns.load(std::memory_order_relaxed)) {
          Cycle c{id, now_ns(), 0, 0};
          lock.lock();
          c.acquired_ns = now_ns();
          if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
          // A read-modify-write on the server that loses updates unless the lock excludes.
          Reply value = client.command("GET", counter_key);
          const int64_t n = value.is_null() ? 0 : std::stoll(value.str());
          client.command("SET", counter_key, n + 1);
          inside.fetch_sub(1);
          c.release_ns = now_ns();
          lock.unlock();
          mine.push_back(c);
          // Time outside the lock lets a woken waiter win before the releaser comes back.
          if (a.outside_us > 0) {
            std::this_thread::sleep_for(std::chrono::microseconds(a.outside_us));
          }
        }
      } catch (const std::exception& e) {
        failures.fetch_add(1);
        std::lock_guard<std::mutex> guard(error_mutex);
        if (first_error.empty()) first_error = e.what();
        if (!arrived) start_line.arrive_and_drop();
      }
    });
  }
  start_line.arrive_and_wait();
  for (std::thread& t : threads) t.join();
  const int64_t end_ns = now_ns();

  int64_t total = 0;
  for (const auto& mine : cycles) total += static_cast<int64_t>(mine.size());
  int64_t counter = -1;
  bool released = false;
  try {
    Client check(client_options(a));
    Reply value = check.command("GET", counter_key);
    counter = value.is_null() ? 0 : std::stoll(value.str());
    released = check.command("EXISTS", a.name).integer() == 0;
    check.command("DEL", counter_key);
  } catch (const std::exception& e) {
    failures.fetch_add(1);
    if (first_error.empty()) first_error = e.what();
  }
  if (!a.events_path.empty()) {
    std::vector<Cycle> all;
    all.reserve(total);
    for (const auto& mine : cycles) all.insert(all.end(), mine.begin(), mine.end());
    std::sort(all.begin(), all.end(),
              [](const Cycle& x, const Cycle& y) { return x.acquired_ns < y.acquired_ns; });
    std::ofstream out(a.events_path);
    for (const Cycle& c : all) {
      out << c.contender << ' ' << c.called_ns << ' ' << c.acquired_ns << ' ' << c.release_ns
          << '\n';
    }
  }
  std::string error_json;
  for (char ch : first_error) {
    if (ch == '"' || ch == '\\') error_json += '\\';
    error_json += (ch == '\n') ? ' ' : ch;
  }
  std::printf(
      "{\"mode\": \"handoff\", \"contenders\": %d, \"cycles\": %lld, \"counter\": %lld, "
      "\"overlaps\": %lld, \"released\": %s, \"failures\": %d, \"start_ns\": %lld, "
      "\"end_ns\": %lld, \"seconds\": %.6f, \"error\": \"%s\"}\n",
      a.contenders, static_cast<long long>(total), static_cast<long long>(counter),
      static_cast<long long>(overlaps.load()), released ? "true" : "false", failures.load(),
      static_cast<long long>(start_ns), static_cast<long long>(end_ns), (end_ns - start_ns) / 1e9,
      error_json.c_str());
  const bool ok = failures == 0 && counter == total && overlaps == 0 && released;
  return ok ? 0 : 2;
}

int run_fenced_names(const Arguments& a) {
  ClientOptions options = client_options(a);
  options.command_timeout = std::chrono::milliseconds(500);
  std::atomic<int64_t> bad_tokens{0};
  std::atomic<int64_t> next{0};
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int t = 0; t < a.contenders; ++t) {
    threads.emplace_back([&] {
      Client client(options);
      for (int64_t i = next++; i < a.names; i = next++) {
        keywarden::FencedLock lock = client.get_fenced_lock(a.name + ":" + std::to_string(i));
        if (lock.lock_and_get_token() <= 0) ++bad_tokens;
        lock.unlock();
      }
    });
  }
  for (auto& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  Client client(options);
  // Past the latches' second, then until active expiry has taken them all (the count stops
  // moving).
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  int64_t keys = client.command("DBSIZE").integer();
  for (int64_t before = -1; keys != before;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    before = keys;
    keys = client.command("DBSIZE").integer();
  }
  std::printf(
      "{\"mode\": \"fenced-names\", \"names\": %lld, \"per_name_counter\": %s, "
      "\"seconds\": %.6f, \"acquisitions_per_second\": %.1f, \"keys_left\": %lld, "
      "\"bad_tokens\": %lld}\n",
      static_cast<long long>(a.names), a.per_name_counter ? "true" : "false", elapsed,
      a.names / elapsed, static_cast<long long>(keys), static_cast<long long>(bad_tokens.load()));
  return bad_tokens == 0 ? 0 : 2;
}

int64_t percentile(std::vector<int64_t>& sorted, double fraction) {
  if (sorted.empty()) return 0;
  size_t index = static_cast<size_t>(fraction * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(index, sorted.size() - 1)];
}

int run_grant_latency(const Arguments& a) {
  Client client(client_options(a));
  Lock lock = client.get_lock(a.name);
  lock.require_replicas(a.replicas, std::chrono::milliseconds(1000));
  client.command("DEL", a.name);
  std::vector<int64_t> micros;
  micros.reserve(static_cast<size_t>(a.cycles));
  for (int64_t i = 0; i < a.warmup + a.cycles; ++i) {
    const auto start = Clock::now();
    lock.lock();
    const auto granted = Clock::now();
    lock.unlock();
    if (i >= a.warmup) {
      micros.push_back(
          std::chrono::duration_cast<std::chrono::microseconds>(granted - start).count());
    }
  }
  std::sort(micros.begin(), micros.end());
  std::printf(
      "{\"mode\": \"grant-latency\", \"replicas\": %d, \"cycles\": %lld, \"p50_us\": %lld, "
      "\"p99_us\": %lld, \"max_us\": %lld}\n",
      a.replicas, static_cast<long long>(a.cycles), static_cast<long long>(percentile(micros, 0.5)),
      static_cast<long long>(percentile(micros, 0.99)), static_cast<long long>(micros.back()));
  return 0;
}

// The failover run's shared view of who is inside (see the header comment).
struct Occupancy {
  std::mutex mutex;
  std::vector<bool> inside;
  std::vector<bool> lost;  // told on_lost during its current hold
  std::vector<Lock*> locks;
};

int run_failover(const Arguments& a) {
  ClientOptions options = client_options(a);
  options.lock_watchdog_timeout = std::chrono::milliseconds(a.lease_ms);
  options.connect_timeout = std::chrono::milliseconds(2000);
  options.command_timeout = std::chrono::milliseconds(3000);
  options.reconnect_backoff_min = std::chrono::milliseconds(20);
  options.reconnect_backoff_max = std::chrono::milliseconds(500);
  Occupancy occupancy;
  occupancy.inside.assign(a.contenders, false);
  occupancy.lost.assign(a.contenders, false);
  occupancy.locks.assign(a.contenders, nullptr);
  std::atomic<int64_t> grants{0}, violations{0}, lost{0}, not_durable{0}, errors{0};
  std::atomic<int64_t> lost_inside{0};
  std::mutex error_mutex;
  std::string last_error;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(a.seconds));
  std::atomic<bool> stop{false};
  if (a.until_stdin_closes) {
    // Detached: a read() blocked on a pipe that stays open must not hold up the exit.
    std::thread([&stop] {
      char byte;
      while (::read(0, &byte, 1) > 0) {
      }
      stop = true;
    }).detach();
  }
  auto note_error = [&](const std::exception& e) {
    ++errors;
    std::lock_guard<std::mutex> guard(error_mutex);
    last_error = e.what();
  };
  std::vector<std::thread> threads;
  for (int id = 0; id < a.contenders; ++id) {
    threads.emplace_back([&, id] {
      std::unique_ptr<Client> client;
      std::unique_ptr<Lock> lock;
      while (Clock::now() < deadline && !stop) {
        try {
          if (!client) {
            client = std::make_unique<Client>(options);
            lock = std::make_unique<Lock>(client->get_lock(a.name));
            lock->require_replicas(a.replicas, std::chrono::milliseconds(1000));
            lock->on_lost([&, id](keywarden::LockLostReason) {
              ++lost;
              std::lock_guard<std::mutex> guard(occupancy.mutex);
              if (occupancy.inside[id]) ++lost_inside;
              occupancy.lost[id] = true;
            });
            lock->on_error([&](const std::exception& e) { note_error(e); });
            std::lock_guard<std::mutex> guard(occupancy.mutex);
            occupancy.locks[id] = lock.get();
          }
          if (!lock->try_lock_for(std::chrono::milliseconds(1000))) continue;
          ++grants;
          {
            std::lock_guard<std::mutex> guard(occupancy.mutex);
            for (int other = 0; other < a.contenders; ++other) {
              if (other != id && occupancy.inside[other] && !occupancy.lost[other] &&
                  occupancy.locks[other]->valid()) {
                ++violations;
              }
            }
            occupancy.inside[id] = true;
            occupancy.lost[id] = false;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(a.hold_ms));
          {
            std::lock_guard<std::mutex> guard(occupancy.mutex);
            occupancy.inside[id] = false;
          }
          lock->unlock();
        } catch (const keywarden::NotDurableError&) {
          ++not_durable;
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        } catch (const std::exception& e) {
          note_error(e);
          {
            std::lock_guard<std::mutex> guard(occupancy.mutex);
            occupancy.inside[id] = false;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
      }
      std::lock_guard<std::mutex> guard(occupancy.mutex);
      occupancy.locks[id] = nullptr;
      occupancy.inside[id] = false;
      // The handle and client go with the thread; their destructors release what is held.
    });
  }
  for (auto& thread : threads) thread.join();
  std::string error_json;
  for (char ch : last_error) {
    if (ch == '"' || ch == '\\') error_json += '\\';
    error_json += (ch == '\n') ? ' ' : ch;
  }
  std::printf(
      "{\"mode\": \"failover\", \"replicas\": %d, \"contenders\": %d, \"grants\": %lld, "
      "\"violations\": %lld, \"lost\": %lld, \"lost_inside\": %lld, \"not_durable\": %lld, "
      "\"errors\": %lld, \"last_error\": \"%s\"}\n",
      a.replicas, a.contenders, static_cast<long long>(grants.load()),
      static_cast<long long>(violations.load()), static_cast<long long>(lost.load()),
      static_cast<long long>(lost_inside.load()), static_cast<long long>(not_durable.load()),
      static_cast<long long>(errors.load()), error_json.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Arguments a = parse_arguments(argc, argv);
  try {
    if (a.mode == "fenced-names") return run_fenced_names(a);
    if (a.mode == "grant-latency") return run_grant_latency(a);
    if (a.mode == "failover") return run_failover(a);
    return a.mode == "uncontended" ? run_uncontended(a) : run_handoff(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lock_bench: %s\n", e.what());
    return 1;
  }
}
