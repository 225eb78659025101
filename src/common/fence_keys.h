// The key names of fencing tokens, shared by the server (LOCK.ACQUIRE … FENCE, LOCK.FENCED)
// and libkeywarden's FencedLock, so that both draw tokens from the same counters.
//
// One counter per cluster slot, `keywarden:fence:{<tag>}`, where <tag> is the shortest base-36
// numeral (0, 1, … z, 10, …) whose slot is the lock name's slot: every name of a slot shares
// it, so at most 16384 counters exist however many names were ever locked, and each counter
// lives on the node that holds the lock. The highest token a resource has seen (LOCK.FENCED)
// is a field of a per-slot hash, `keywarden:fence-marks:{<tag>}`, again not a key per name.
// The hold's token is kept in the lock hash itself under kFencingTokenField.
#pragma once

#include <string>
#include <string_view>

namespace keywarden {

// The lock-hash field holding the current hold's token. Not an owner id (those are
// "<client id>:<owner id>"); Redisson's scripts delete the whole hash on the last release.
inline constexpr std::string_view kFencingTokenField = "keywarden:fencing-token";

// `name` as libkeywarden tags a lock name: itself when it has a non-empty hash tag, else
// "{name}" (so that the lock's companion keys share its slot).
std::string tagged_lock_name(std::string_view name);

// The shortest hash tag whose slot is `slot` (0 <= slot < 16384).
const std::string& slot_tag(int slot);

// The shared token counter of lock `name`: keywarden:fence:{<tag of name's slot>}.
std::string fence_counter_key(std::string_view name);
// Redisson's RFencedLock per-name counter, redisson_lock_token:{name}: read so that tokens
// never go back when a name moves from that layout to the shared one.
std::string legacy_fence_counter_key(std::string_view name);
// The hash of highest tokens seen by the resources of `resource`'s slot:
// keywarden:fence-marks:{<tag>}, field = resource.
std::string fence_marks_key(std::string_view resource);

}  // namespace keywarden
