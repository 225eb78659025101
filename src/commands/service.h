// Services: the server's jobs, one object each (the AOF, the RDB files, diagnostics, the
// client registry, scripting, replication next). A service owns its state and installs
// everything else it has in one call: its commands, its config directives, its INFO fields.
// The server calls its cron and before-sleep work; handlers reach it through their context,
// typed (`ctx.service<AofService>()`), never through a pointer kept in a global object.
//
// The registry is a lookup by C++ type and knows nothing of what it holds, so the command
// layer can carry it while the services themselves live in the layers above (persistence,
// scripting, server). Adding a service is one new file plus one line where the server lists
// its services (server/services.cc).
#pragma once

#include <cassert>
#include <cstdint>
#include <utility>
#include <vector>

namespace keywarden {

class CommandTable;
class ConfigRegistry;
class InfoSections;

// What a service registers itself with, once, at start-up.
struct ServiceSetup {
  CommandTable& commands;
  ConfigRegistry& config;
  InfoSections& info;
};

class Service {
 public:
  virtual ~Service() = default;
  // Registers the service's commands, config directives and INFO writers.
  virtual void install(ServiceSetup& setup) = 0;
  // From the server cron, `hz` times a second (`now_ms`: wall clock).
  virtual void cron(int64_t now_ms) { (void)now_ms; }
  // Once per event-loop iteration, before the loop waits.
  virtual void before_sleep() {}
};

// Objects reachable by type: services, and the few shared parts that are not services (the
// dispatcher, the function store). Holds pointers; the server owns what they point to and
// keeps it alive as long as the registry.
class ServiceRegistry {
 public:
  // Makes `object` the one T (replacing any earlier one; null removes it).
  template <typename T>
  void provide(T* object) {
    for (auto& [key, pointer] : entries_) {
      if (key == type_key<T>()) {
        pointer = object;
        return;
      }
    }
    entries_.emplace_back(type_key<T>(), object);
  }
  // The T provided, or null.
  template <typename T>
  T* find() const {
    for (const auto& [key, pointer] : entries_) {
      if (key == type_key<T>()) return static_cast<T*>(pointer);
    }
    return nullptr;
  }
  // The T provided; there must be one.
  template <typename T>
  T& get() const {
    T* object = find<T>();
    assert(object != nullptr);
    return *object;
  }

 private:
  // One distinct address per type, without RTTI.
  template <typename T>
  static const void* type_key() {
    static const char key = 0;
    return &key;
  }

  std::vector<std::pair<const void*, void*>> entries_;
};

}  // namespace keywarden
