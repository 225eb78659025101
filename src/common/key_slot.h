// Redis Cluster's key slots: CRC-16 (XMODEM: polynomial 0x1021, initial value 0, no
// reflection) of the key, or of its hash tag — the text between the first '{' and the first
// '}' after it, when that text is not empty — modulo 16384. Keys that share a hash tag share
// a slot, which is how a lock's keys stay on one cluster node.
#pragma once
#include <cstdint>
#include <string_view>

namespace keywarden {

inline constexpr int kClusterSlots = 16384;

uint16_t crc16(std::string_view data);

// The part of `key` that decides its slot: its hash tag, or the whole key.
std::string_view hash_tag_part(std::string_view key);

inline int key_slot(std::string_view key) { return crc16(hash_tag_part(key)) % kClusterSlots; }

}  // namespace keywarden
