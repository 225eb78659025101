// keywarden::SimpleLock: the single-key lock most Redis users write by hand. The key `name`
// holds this handle's random token while it is held (SET name token NX PX lease); only the
// holder's token releases or extends it, so a holder whose lease ran out and whose lock was
// taken by another can never delete the new holder's lock. Not reentrant, no watchdog, no
// queue: the lease is explicit and extend() renews it.
//
// On a server with Redis 8.4's conditional writes (keywarden, Redis >= 8.4) the release is one
// `DELEX name IFEQ token` and the renewal one `SET name token IFEQ token PX lease`; elsewhere
// (Redis 7.x, Valkey) the same compare-and-delete / compare-and-expire runs as a Lua script.
// The client asks the server once (COMMAND INFO DELEX) and falls back to the scripts for good
// if a server it later reaches answers "unknown command".
#pragma once

#include <chrono>
#include <string>

#include "keywarden/lock.h"  // NotOwnerError

namespace keywarden {

class Client;

class SimpleLock {
 public:
  using Milliseconds = std::chrono::milliseconds;

  // One attempt: true when the lock was free and is now held for `lease`.
  bool try_lock(Milliseconds lease);
  // Attempts until `wait` has passed, sleeping between attempts at most until the holder's
  // lease ends (and never longer than 50 ms, so a release is noticed quickly).
  bool try_lock_for(Milliseconds wait, Milliseconds lease);
  // Deletes the lock if this handle's token still holds it; throws NotOwnerError otherwise
  // (never held, already released, or the lease ran out).
  void unlock();
  // Sets the lease to `lease` from now if this handle still holds the lock; false otherwise.
  bool extend(Milliseconds lease);
  // Per the server: whether the key holds this handle's token.
  bool is_held() const;

  const std::string& name() const { return name_; }
  const std::string& token() const { return token_; }

 private:
  friend class Client;
  SimpleLock(Client& client, std::string name);

  Client* client_;
  std::string name_;
  std::string token_;
};

}  // namespace keywarden
