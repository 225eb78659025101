// Server-assisted client-side caching (CLIENT TRACKING), as Redis 7.0 does it. A client with
// tracking on is told, by an `invalidate` push (RESP3) or a message on __redis__:invalidate
// to the client it redirects to (RESP2 subscribed there), when a key it may hold in its cache
// changes.
//
// Two modes. Default: the server remembers, per key name, the ids of the tracking clients that
// read it through a read-only command (with OPTIN only when CLIENT CACHING YES preceded the
// command, with OPTOUT unless CLIENT CACHING NO did); the first change of the key invalidates
// it for those clients and forgets them, so each read earns at most one message. BCAST: the
// client names prefixes instead (none: every key) and hears of every changed key under them,
// batched per event-loop turn. Key names are global: a change in any database invalidates the
// name, as in Redis. A flush (FLUSHDB, FLUSHALL) sends every tracking client a null
// invalidation, "everything".
//
// Invariants: table_ holds a key only while some client id is recorded for it; ids are never
// removed when a client goes away (a message to a gone id is skipped), as Redis does it,
// so that disconnecting a client that read a million keys costs nothing. Messages for the
// client whose command is running wait until its reply is written (pending_): a push never
// lands inside a reply.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/string_hash.h"

namespace keywarden {

struct ClientSession;
struct Command;

// One client's tracking mode (in its ClientSession).
struct ClientTracking {
  bool on = false;
  bool bcast = false;
  bool optin = false;
  bool optout = false;
  bool noloop = false;
  // CLIENT CACHING YES (OPTIN) or NO (OPTOUT) given for the next command.
  bool caching = false;
  // The client it redirects to was gone when a message was due.
  bool broken_redirect = false;
  uint64_t redirect = 0;  // 0: messages go to the client itself
  std::vector<std::string> prefixes;  // BCAST, sorted
};

// What CLIENT TRACKING ON asks for.
struct TrackingRequest {
  uint64_t redirect = 0;
  bool bcast = false;
  bool optin = false;
  bool optout = false;
  bool noloop = false;
  std::vector<std::string> prefixes;
};

class KeyTracking {
 public:
  // The live client with this id, or null; the server layer provides it (CLIENT TRACKING
  // REDIRECT checks it, and every message looks its receiver up).
  using ClientFinder = std::function<ClientSession*(uint64_t id)>;
  void set_client_finder(ClientFinder finder) { find_client_ = std::move(finder); }
  ClientSession* find_client(uint64_t id) const {
    return find_client_ ? find_client_(id) : nullptr;
  }

  // Any client tracking, or keys still remembered for clients that stopped (they go when the
  // keys change, as in Redis): otherwise every hook below returns at once.
  bool active() const { return !tracking_ids_.empty() || !table_.empty(); }

  // CLIENT TRACKING ON with `request`, already checked by the caller against Redis's rules
  // (check_enable); turning it on again changes the options and adds prefixes.
  void enable(ClientSession& client, const TrackingRequest& request);
  // Redis's checks of CLIENT TRACKING ON against the request itself and the client's current
  // mode; the error text, or empty when it may go ahead.
  std::string check_enable(const ClientSession& client, const TrackingRequest& request) const;
  // CLIENT TRACKING OFF, RESET, disconnection.
  void disable(ClientSession& client);

  // The command that `client` runs at top level begins and ends. Keys changed in between by
  // this client are not announced to itself under NOLOOP, and messages for it are held until
  // end_command() (its reply is written by then). begin_command returns the client whose
  // command was running, for end_command to restore.
  ClientSession* begin_command(ClientSession& client);
  void end_command(ClientSession* previous);

  // After `command` ran with `args` for the running client (directly, in EXEC or in a script):
  // remembers its keys when it is a read-only command and that client tracks them.
  void remember(const Command& command, std::span<const std::string_view> args);
  // `key` changed (written, deleted, expired, evicted) in any database.
  void invalidate(std::string_view key);
  // Every key is gone (FLUSHDB, FLUSHALL): a null invalidation to every tracking client.
  void invalidate_all();
  // Once per event-loop turn: the BCAST batches, then tracking-table-max-keys.
  void before_sleep(int64_t max_keys);

  uint64_t clients() const { return tracking_ids_.size(); }
  uint64_t keys() const { return table_.size(); }
  uint64_t items() const { return items_; }
  uint64_t prefixes() const { return prefixes_.size(); }

 private:
  struct Prefix {
    std::vector<uint64_t> clients;
    // Keys changed under the prefix this turn, with the id of the client that changed each
    // last (0: no client), for NOLOOP.
    std::map<std::string, uint64_t, std::less<>> changed;
  };
  using Keys = std::span<const std::string_view>;

  // Sends `client` one invalidation: `keys`, or null (everything) when keys is empty and
  // `everything` is set, to itself or to the client it redirects to.
  void send(ClientSession& client, Keys keys, bool everything);
  void forget(std::string_view key, std::vector<uint64_t> ids);
  void flush_pending();

  ClientFinder find_client_;
  std::vector<uint64_t> tracking_ids_;  // the clients with tracking on, sorted
  uint64_t items_ = 0;  // ids over all keys of table_
  // Key name -> ids of the clients that read it, sorted.
  std::unordered_map<std::string, std::vector<uint64_t>, TransparentStringHash, std::equal_to<>>
      table_;
  std::map<std::string, Prefix, std::less<>> prefixes_;
  ClientSession* current_ = nullptr;  // the client running a command at top level
  // Keys invalidated for the running client while its command runs; nullopt: everything.
  struct Pending {
    ClientSession* client;
    std::optional<std::string> key;
  };
  std::vector<Pending> pending_;
  uint32_t limit_rounds_ = 0;  // consecutive turns over tracking-table-max-keys
};

}  // namespace keywarden
