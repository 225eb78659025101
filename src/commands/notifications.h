// Keyspace notifications: the event classes of `notify-keyspace-events`, how the setting's
// text (K E g $ l s h z x e t m d n A) maps to class bits and back, exactly as Redis 7.0 reads
// and prints it. Events are published by ServerState::notify_keyspace_event, which handlers
// reach through CommandContext::notify; with notifications off (the default) a call costs one
// bit test and builds no string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace keywarden {

// Class bits, numbered as Redis numbers them (modules see the same values there).
enum NotifyClass : uint32_t {
  kNotifyKeyspace = 1u << 0,  // K: publish on __keyspace@<db>__:<key>
  kNotifyKeyevent = 1u << 1,  // E: publish on __keyevent@<db>__:<event>
  kNotifyGeneric = 1u << 2,   // g: DEL, EXPIRE, RENAME, COPY, MOVE, RESTORE…
  kNotifyString = 1u << 3,    // $
  kNotifyList = 1u << 4,      // l
  kNotifySet = 1u << 5,       // s
  kNotifyHash = 1u << 6,      // h
  kNotifyZset = 1u << 7,      // z
  kNotifyExpired = 1u << 8,   // x: a key removed because its deadline passed
  kNotifyEvicted = 1u << 9,   // e: a key removed by maxmemory eviction
  kNotifyStream = 1u << 10,   // t
  kNotifyKeyMiss = 1u << 11,  // m: a read found no key (not part of A, as in Redis)
  kNotifyModule = 1u << 13,   // d
  kNotifyNew = 1u << 14,      // n: a key was created (not part of A, as in Redis)
  // A: every class but m and n.
  kNotifyAll = kNotifyGeneric | kNotifyString | kNotifyList | kNotifySet | kNotifyHash |
               kNotifyZset | kNotifyExpired | kNotifyEvicted | kNotifyStream | kNotifyModule,
};

// Parses the setting's text into class bits; false on a character that names no class.
bool parse_notify_flags(std::string_view text, uint32_t* flags);
// The setting as CONFIG GET shows it: "A" for every class of A, else the class letters in
// Redis's order, then K, E and m. As in Redis 7.0, `n` is not shown next to A (it stays set).
std::string format_notify_flags(uint32_t flags);

// CONFIG SET's reason for a bad character.
inline constexpr std::string_view kNotifyFlagsError =
    "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";

}  // namespace keywarden
