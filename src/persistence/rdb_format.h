// The constants of the RDB format as Redis 7.0 writes it (RDB version 10): opcodes, object
// types, length-prefix tags and the packed encodings' markers. Facts of the format, shared by
// the writer, the loader, DUMP/RESTORE and the tests.
#pragma once

#include <cstdint>

namespace keywarden::rdb {

inline constexpr int kVersion = 10;  // what we write; we load 1..kVersion (and 11's set type)
// What we write instead when the data holds hash-field deadlines (Redis 7.4+'s types 24, 25),
// so that a file without any stays loadable by Redis 7.0.
inline constexpr int kVersionWithFieldTtl = 12;
inline constexpr int kMaxLoadableVersion = 12;

// Object types (the byte before each key).
inline constexpr uint8_t kTypeString = 0;
inline constexpr uint8_t kTypeList = 1;
inline constexpr uint8_t kTypeSet = 2;
inline constexpr uint8_t kTypeZSet = 3;
inline constexpr uint8_t kTypeHash = 4;
inline constexpr uint8_t kTypeZSet2 = 5;
inline constexpr uint8_t kTypeModule = 6;
inline constexpr uint8_t kTypeModule2 = 7;
inline constexpr uint8_t kTypeHashZipmap = 9;
inline constexpr uint8_t kTypeListZiplist = 10;
inline constexpr uint8_t kTypeSetIntset = 11;
inline constexpr uint8_t kTypeZSetZiplist = 12;
inline constexpr uint8_t kTypeHashZiplist = 13;
inline constexpr uint8_t kTypeListQuicklist = 14;
inline constexpr uint8_t kTypeStreamListpacks = 15;
inline constexpr uint8_t kTypeHashListpack = 16;
inline constexpr uint8_t kTypeZSetListpack = 17;
inline constexpr uint8_t kTypeListQuicklist2 = 18;
inline constexpr uint8_t kTypeStreamListpacks2 = 19;
inline constexpr uint8_t kTypeSetListpack = 20;  // Redis 7.2 (RDB 11)
inline constexpr uint8_t kTypeStreamListpacks3 = 21;
// Redis 7.4 GA's hashes with field deadlines (RDB 12). Both open with the earliest deadline in
// 8 little-endian bytes (0: none). METADATA, for the hashtable encoding: a count, then per field
// its deadline as a length (0: none, else deadline - earliest + 1), the field and the value.
// LISTPACK_EX: one listpack of (field, value, deadline-or-0) triplets, by deadline, plain last.
// (22 and 23 were the pre-GA forms, which Redis itself no longer loads.)
inline constexpr uint8_t kTypeHashMetadata = 24;
inline constexpr uint8_t kTypeHashListpackEx = 25;

// Opcodes (in the type position).
inline constexpr uint8_t kOpFunction2 = 245;
inline constexpr uint8_t kOpFunction = 246;
inline constexpr uint8_t kOpModuleAux = 247;
inline constexpr uint8_t kOpIdle = 248;
inline constexpr uint8_t kOpFreq = 249;
inline constexpr uint8_t kOpAux = 250;
inline constexpr uint8_t kOpResizeDb = 251;
inline constexpr uint8_t kOpExpireTimeMs = 252;
inline constexpr uint8_t kOpExpireTime = 253;
inline constexpr uint8_t kOpSelectDb = 254;
inline constexpr uint8_t kOpEof = 255;

// Length prefixes: the top two bits of the first byte.
inline constexpr uint8_t kLen6Bit = 0;
inline constexpr uint8_t kLen14Bit = 1;
inline constexpr uint8_t kLen32Bit = 0x80;
inline constexpr uint8_t kLen64Bit = 0x81;
inline constexpr uint8_t kLenEncoded = 3;  // "11": a special string encoding follows
inline constexpr uint8_t kEncInt8 = 0;
inline constexpr uint8_t kEncInt16 = 1;
inline constexpr uint8_t kEncInt32 = 2;
inline constexpr uint8_t kEncLzf = 3;

// Quicklist 2 node containers.
inline constexpr uint64_t kQuicklistNodePlain = 1;
inline constexpr uint64_t kQuicklistNodePacked = 2;

}  // namespace keywarden::rdb
