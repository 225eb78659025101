// DEBUG: the subcommands operators and tools use, with Redis 7.0's replies. The command is
// protected (enable-debug-command, checked by the dispatcher); it matches its subcommand and
// argument count itself, as Redis does, so a wrong count is "unknown subcommand".
//
// DEBUG DIGEST is how people check that two servers hold the same data, so it follows Redis's
// algorithm exactly and gives the same 40 hex digits for the same dataset:
// - xor_digest(d, bytes) xors SHA1(bytes) into d: order-free, for the elements of sets,
//   hashes, sorted sets and for the keys of a database;
// - mix_digest(d, bytes) sets d = SHA1(d xor SHA1(bytes)): ordered, for list elements and for
//   the parts of one element (a hash field then its value, a member then its score).
// A key's digest mixes the key, the type number (big-endian 4 bytes: string 0, list 1, set 2,
// sorted set 3, hash 4) and the value; every value is digested as the strings a client reads
// (integers as decimal text, scores as "%.17g"), never as its encoding, so a listpack and a
// hashtable holding the same members agree. A key with a deadline xors in "!!expire!!" (the
// deadline itself is not digested). Each non-empty database mixes its number (big-endian 4
// bytes) into the total before xoring in its keys. Keys whose deadline passed but that no one
// deleted yet count, as in Redis, which walks its table raw.
//
// Subcommands whose Redis effect concerns a structure keywarden does not have answer as Redis
// does and change what we have instead: QUICKLIST-PACKED-THRESHOLD is validated and kept (our
// list nodes have no plain mode), HTSTATS describes our own tables (and the expiry heap in
// place of Redis's expires dict), LISTPACK and QUICKLIST print our own layout to stdout.
#include <arpa/inet.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "commands/config_registry.h"
#include "commands/context.h"
#include "commands/errors.h"
#include "common/ascii.h"
#include "common/glob.h"
#include "common/log.h"
#include "common/number.h"
#include "common/sha1.h"
#include "persistence/rdb_codec.h"
#include "server/server.h"
#include "server/server_families.h"
#include "storage/memory_accounting.h"
#include "types/hash_value.h"
#include "types/list_value.h"
#include "types/set_value.h"
#include "types/stream_value.h"
#include "types/zset_value.h"

namespace keywarden {
namespace {

// --- Digests -----------------------------------------------------------------------------------

using Digest = std::array<uint8_t, 20>;

void xor_digest(Digest& digest, std::string_view bytes) {
  const std::array<uint8_t, 20> hash = sha1(bytes);
  for (size_t i = 0; i < digest.size(); ++i) digest[i] ^= hash[i];
}

void mix_digest(Digest& digest, std::string_view bytes) {
  xor_digest(digest, bytes);
  digest = sha1(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

std::string_view big_endian_bytes(uint32_t value, uint32_t* storage) {
  *storage = htonl(value);
  return {reinterpret_cast<const char*>(storage), sizeof(*storage)};
}

std::string score_text(double score) {
  char text[64];
  const int length = std::snprintf(text, sizeof(text), "%.17g", score);
  return std::string(text, static_cast<size_t>(length));
}

// The value part of a key's digest (Redis's xorObjectDigest): type, value, expiry marker.
void value_digest(const Database& db, const Entry& entry, Digest& digest) {
  const Value& value = entry.value;
  uint32_t storage;
  mix_digest(digest, big_endian_bytes(static_cast<uint32_t>(value.type()), &storage));
  switch (value.type()) {
    case ValueType::kString: {
      char scratch[kInt64BufferSize];
      mix_digest(digest, value.string_view(scratch));
      break;
    }
    case ValueType::kList:
      value.as<ListValue>().for_each([&](std::string_view element) { mix_digest(digest, element); });
      break;
    case ValueType::kSet:
      value.as<SetValue>().for_each([&](std::string_view member) { xor_digest(digest, member); });
      break;
    case ValueType::kZSet:
      value.as<ZSetValue>().for_each([&](std::string_view member, double score) {
        Digest element{};
        mix_digest(element, member);
        mix_digest(element, score_text(score));
        xor_digest(digest, std::string_view(reinterpret_cast<const char*>(element.data()), 20));
      });
      break;
    case ValueType::kHash:
      value.as<HashValue>().for_each([&](std::string_view field, std::string_view data) {
        Digest element{};
        mix_digest(element, field);
        mix_digest(element, data);
        xor_digest(digest, std::string_view(reinterpret_cast<const char*>(element.data()), 20));
      });
      break;
    case ValueType::kStream: {
      const auto& stream = value.as<StreamValue>();
      stream.for_range({0, 0}, StreamId::max(), false, [&](const StreamEntry& e) {
        mix_digest(digest, e.id.to_string());
        for (const auto& [field, data] : e.fields) {
          mix_digest(digest, field);
          mix_digest(digest, data);
        }
        return true;
      });
      mix_digest(digest, stream.last_id().to_string());
      for (const auto& [name, group] : stream.groups()) {
        mix_digest(digest, name);
        mix_digest(digest, group.last_id.to_string());
      }
      break;
    }
  }
  if (entry.has_expiry() && db.deadline_of(&entry) != -1) xor_digest(digest, "!!expire!!");
}

Digest dataset_digest(const Keyspace& keyspace) {
  Digest total{};
  for (int index = 0; index < keyspace.database_count(); ++index) {
    const Database& db = keyspace.db(index);
    if (db.size() == 0) continue;
    uint32_t storage;
    mix_digest(total, big_endian_bytes(static_cast<uint32_t>(index), &storage));
    db.for_each([&](const Entry* entry) {
      Digest digest{};
      mix_digest(digest, entry->key());
      value_digest(db, *entry, digest);
      xor_digest(total, std::string_view(reinterpret_cast<const char*>(digest.data()), 20));
      return true;
    });
  }
  return total;
}

std::string hex(const Digest& digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  for (uint8_t byte : digest) {
    text.push_back(kDigits[byte >> 4]);
    text.push_back(kDigits[byte & 15]);
  }
  return text;
}

void debug_digest(CommandContext& ctx) {
  ctx.reply.simple_string(hex(dataset_digest(ctx.server.keyspace())));
}

void debug_digest_value(CommandContext& ctx) {
  ctx.reply.array_header(ctx.args.size() - 2);
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    // Raw lookup, as Redis: a logically expired key still has a digest.
    Digest digest{};
    if (const Entry* entry = ctx.db().find_raw(ctx.args[i])) value_digest(ctx.db(), *entry, digest);
    ctx.reply.simple_string(hex(digest));
  }
}

// --- Introspection -----------------------------------------------------------------------------

// The same rule as OBJECT REFCOUNT: small integers count as Redis's shared objects.
int64_t reported_refcount(const Value& value) {
  constexpr int64_t kSharedIntegers = 10000;
  const bool shared = value.type() == ValueType::kString && value.is_int() &&
                      value.int_value() >= 0 && value.int_value() < kSharedIntegers;
  return shared ? INT32_MAX : 1;
}

// What the value takes in an RDB file without its type byte (Redis's rdbSavedObjectLen).
size_t serialized_length(CommandContext& ctx, const Value& value) {
  RdbWriter out(Server::from(ctx).rdb().settings().compression);
  out.object(value);
  return out.buffer().size() - 1;
}

void debug_object(CommandContext& ctx) {
  // Redis reads the table directly: no expiry check, no access time, no hit/miss counted.
  Entry* entry = ctx.db().find_raw(ctx.args[2]);
  if (entry == nullptr) return ctx.error(errors::kNoSuchKey);
  const Value& value = entry->value;
  std::string extra;
  if (value.type() == ValueType::kList) {
    const auto& list = value.as<ListValue>();
    const size_t nodes = list.node_count();
    char text[256];
    std::snprintf(text, sizeof(text),
                  " ql_nodes:%zu ql_avg_node:%.2f ql_listpack_max:%d ql_compressed:%d "
                  "ql_uncompressed_size:%zu",
                  nodes, nodes == 0 ? 0.0 : static_cast<double>(list.size()) / nodes,
                  static_cast<int>(ctx.server.settings().list_max_listpack_size),
                  ctx.server.settings().list_compress_depth != 0 ? 1 : 0, list.payload_bytes());
    extra = text;
  }
  char line[512];
  std::snprintf(line, sizeof(line),
                "Value at:%p refcount:%lld encoding:%s serializedlength:%zu lru:%u "
                "lru_seconds_idle:%lld%s",
                static_cast<const void*>(&value), static_cast<long long>(reported_refcount(value)),
                std::string(encoding_name(value.encoding())).c_str(),
                serialized_length(ctx, value), entry->access_clock & access_clock::kLruMax,
                static_cast<long long>(access_clock::lru_idle_ms(entry->access_clock, ctx.now_ms) /
                                       1000),
                extra.c_str());
  ctx.reply.simple_string(line);
}

// Redis's dictGetStats text for one table given its chain lengths.
std::string table_stats(int which, const std::vector<uint32_t>& chains, size_t elements) {
  std::string text = "Hash table " + std::to_string(which) + " stats (" +
                     (which == 0 ? "main hash table" : "rehashing target") + "):\n";
  if (elements == 0) return text + "No stats available for empty dictionaries\n";
  constexpr size_t kVectorLength = 50;
  std::vector<size_t> histogram(kVectorLength, 0);
  size_t slots = 0, longest = 0, total = 0;
  for (uint32_t length : chains) {
    histogram[std::min<size_t>(length, kVectorLength - 1)]++;
    if (length == 0) continue;
    ++slots;
    longest = std::max<size_t>(longest, length);
    total += length;
  }
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer),
                " table size: %zu\n number of elements: %zu\n different slots: %zu\n"
                " max chain length: %zu\n avg chain length (counted): %.02f\n"
                " avg chain length (computed): %.02f\n Chain length distribution:\n",
                chains.size(), elements, slots, longest,
                static_cast<float>(total) / static_cast<float>(slots),
                static_cast<float>(elements) / static_cast<float>(slots));
  text += buffer;
  for (size_t i = 0; i + 1 < kVectorLength; ++i) {
    if (histogram[i] == 0) continue;
    std::snprintf(buffer, sizeof(buffer), "   %zu: %zu (%.02f%%)\n", i, histogram[i],
                  static_cast<float>(histogram[i]) / static_cast<float>(chains.size()) * 100);
    text += buffer;
  }
  return text;
}

void debug_htstats(CommandContext& ctx) {
  int64_t index;
  if (!parse_int64(ctx.args[2], &index)) return ctx.error(errors::kNotInteger);
  if (index < 0 || index >= ctx.server.keyspace().database_count()) {
    return ctx.error("ERR Out of range database");
  }
  Database& db = ctx.server.keyspace().db(static_cast<int>(index));
  std::string text = "[Dictionary HT]\n";
  const std::vector<uint32_t> main = db.table().chain_lengths(0);
  const std::vector<uint32_t> target = db.table().chain_lengths(1);
  size_t in_target = 0;
  for (uint32_t length : target) in_target += length;
  text += table_stats(0, main, db.size() - in_target);
  if (db.table().rehashing()) text += table_stats(1, target, in_target);
  // keywarden keeps deadlines in a heap, not a table: it is shown as one chain per slot.
  text += "[Expires HT]\n";
  text += table_stats(0, std::vector<uint32_t>(db.volatile_count(), 1), db.volatile_count());
  ctx.reply.verbatim(text);
}

// Redis's objectCommandLookup: expiry applies, the access time is left alone.
Entry* lookup_quietly(CommandContext& ctx, std::string_view key) {
  return ctx.lookup_read(key, CommandContext::kLookupNoTouch | CommandContext::kLookupNoNotify);
}

void debug_htstats_key(CommandContext& ctx) {
  const Entry* entry = lookup_quietly(ctx, ctx.args[2]);
  if (entry == nullptr) return ctx.error(errors::kNoSuchKey);
  const Value& value = entry->value;
  std::vector<uint32_t> chains;
  if (value.type() == ValueType::kHash) chains = value.as<HashValue>().chain_lengths();
  if (value.type() == ValueType::kSet) chains = value.as<SetValue>().chain_lengths();
  if (value.type() == ValueType::kZSet) chains = value.as<ZSetValue>().chain_lengths();
  if (chains.empty()) {
    return ctx.error(
        "ERR The value stored at the specified key is not represented using an hash table");
  }
  ctx.reply.verbatim(table_stats(0, chains, value.aggregate_size()));
}

void debug_listpack(CommandContext& ctx) {
  const Entry* entry = lookup_quietly(ctx, ctx.args[2]);
  if (entry == nullptr) return ctx.error(errors::kNoSuchKey);
  const Value& value = entry->value;
  if (value.type() == ValueType::kString || (value.encoding() != Encoding::kListpack &&
                                             value.encoding() != Encoding::kListpackEx)) {
    return ctx.error("ERR Not a listpack encoded object.");
  }
  std::cout << "{listpack " << ctx.args[2] << "} type " << static_cast<int>(value.type())
            << " entries " << value.aggregate_size() << " bytes " << value.payload_bytes()
            << std::endl;
  ctx.reply.simple_string("Listpack structure printed on stdout");
}

void debug_quicklist(CommandContext& ctx) {
  const Entry* entry = lookup_quietly(ctx, ctx.args[2]);
  if (entry == nullptr) return ctx.error(errors::kNoSuchKey);
  const Value& value = entry->value;
  if (value.type() != ValueType::kList) return ctx.error("ERR Not a quicklist encoded object.");
  const auto& list = value.as<ListValue>();
  std::cout << "{quicklist " << ctx.args[2] << "} nodes " << list.node_count() << " entries "
            << list.size() << " per node:";
  for (uint32_t count : list.node_entry_counts()) std::cout << ' ' << count;
  std::cout << std::endl;
  ctx.reply.simple_string("Quicklist structure printed on stdout");
}

// --- Data --------------------------------------------------------------------------------------

// Redis's getPositiveLongFromObjectOrReply: anything but a non-negative integer is "out of
// range, must be positive".
bool positive_long(CommandContext& ctx, std::string_view text, int64_t* out) {
  if (!parse_int64(text, out) || *out < 0) {
    ctx.error("ERR value is out of range, must be positive");
    return false;
  }
  return true;
}

void debug_populate(CommandContext& ctx) {
  int64_t count, size = 0;
  if (!positive_long(ctx, ctx.args[2], &count)) return;
  if (ctx.args.size() == 5 && !positive_long(ctx, ctx.args[4], &size)) return;
  const std::string prefix = ctx.args.size() >= 4 ? std::string(ctx.args[3]) : "key";
  Database& db = ctx.db();
  char name[128];
  char text[128];
  std::string sized;
  for (int64_t i = 0; i < count; ++i) {
    // Redis formats into a 128-byte buffer: a long prefix is cut there.
    std::snprintf(name, sizeof(name), "%s:%lld", prefix.c_str(), static_cast<long long>(i));
    if (ctx.lookup_write(name) != nullptr) continue;
    const int length = std::snprintf(text, sizeof(text), "value:%lld", static_cast<long long>(i));
    std::string_view data(text, static_cast<size_t>(length));
    if (size > 0) {
      // The requested size, zero-filled past the "value:N" text.
      sized.assign(static_cast<size_t>(size), '\0');
      std::memcpy(sized.data(), text, std::min<size_t>(sized.size(), data.size()));
      data = sized;
    }
    db.add(name, Value::make_plain_string(data));
    ctx.changed_uncounted(name);
  }
  // Not propagated and not counted as changes, as in Redis.
  ctx.reply.simple_string("OK");
}

void debug_reload(CommandContext& ctx) {
  bool save = true, flush = true, merge = false;
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    if (equals_ignore_case(ctx.args[i], "merge")) {
      merge = true;
    } else if (equals_ignore_case(ctx.args[i], "noflush")) {
      flush = false;
    } else if (equals_ignore_case(ctx.args[i], "nosave")) {
      save = false;
    } else {
      return ctx.error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
    }
  }
  bool save_failed = false;
  const std::string error = Server::from(ctx).rdb().reload(save, flush, merge, &save_failed);
  if (save_failed) return ctx.error("ERR");
  if (!error.empty()) {
    log_message(LogLevel::kWarning, "DEBUG RELOAD failed: " + error);
    return ctx.error("ERR Error trying to load the RDB dump");
  }
  log_message(LogLevel::kWarning, "DB reloaded by DEBUG RELOAD");
  ctx.reply.simple_string("OK");
}

void debug_loadaof(CommandContext& ctx) {
  const std::string error = ctx.service<AofService>().reload();
  if (!error.empty()) {
    // Redis exits here, the dataset already gone.
    log_message(LogLevel::kWarning, "DEBUG LOADAOF failed: " + error);
    std::fflush(nullptr);
    ::_exit(1);
  }
  log_message(LogLevel::kWarning, "Append Only File loaded by DEBUG LOADAOF");
  ctx.reply.simple_string("OK");
}

// --- Knobs -------------------------------------------------------------------------------------

void debug_sleep(CommandContext& ctx) {
  // Redis reads the seconds with strtod and ignores what does not parse ("abc" sleeps 0).
  std::string text(ctx.args[2]);
  const double seconds = std::strtod(text.c_str(), nullptr);
  const auto micros = static_cast<long long>(seconds * 1'000'000);
  if (micros > 0) std::this_thread::sleep_for(std::chrono::microseconds(micros));
  ctx.reply.simple_string("OK");
}

// Redis reads these switches with atoi: anything not starting with a non-zero number is 0.
int64_t atoi_argument(CommandContext& ctx, size_t index) {
  return std::atoi(std::string(ctx.args[index]).c_str());
}

void debug_set_active_expire(CommandContext& ctx) {
  ctx.server.keyspace().expiry_settings().active_expire_enabled = atoi_argument(ctx, 2) != 0;
  ctx.reply.simple_string("OK");
}

void debug_pause_cron(CommandContext& ctx) {
  Server::from(ctx).set_cron_paused(atoi_argument(ctx, 2) != 0);
  ctx.reply.simple_string("OK");
}

void debug_set_disable_deny_scripts(CommandContext& ctx) {
  ctx.server.settings().script_disable_deny_script = atoi_argument(ctx, 2) != 0;
  ctx.reply.simple_string("OK");
}

void debug_aof_flush_sleep(CommandContext& ctx) {
  ctx.service<AofService>().log().set_flush_sleep_us(atoi_argument(ctx, 2));
  ctx.reply.simple_string("OK");
}

void debug_quicklist_packed_threshold(CommandContext& ctx) {
  // Validated as Redis validates it; keywarden's list nodes have no plain mode to switch.
  int64_t bytes;
  if (!parse_memory(ctx.args[2], &bytes) || bytes > (int64_t{1} << 32) - (1 << 20)) {
    return ctx.error("ERR argument must be a memory value bigger than 1 and smaller than 4gb");
  }
  ctx.reply.simple_string("OK");
}

void debug_change_repl_id(CommandContext& ctx) {
  log_message(LogLevel::kWarning, "Changing replication IDs after receiving DEBUG change-repl-id");
  Server::from(ctx).replication().ids().reset();
  ctx.reply.simple_string("OK");
}

void debug_config_rewrite_force_all(CommandContext& ctx) {
  Server& server = Server::from(ctx);
  if (server.config_file().empty()) {
    // Redis opens a null path: EFAULT.
    return ctx.error(std::string("ERR CONFIG-REWRITE-FORCE-ALL failed: ") + std::strerror(EFAULT));
  }
  const std::string problem = server.config().rewrite(server.config_file());
  if (!problem.empty()) return ctx.error("ERR CONFIG-REWRITE-FORCE-ALL failed: " + problem);
  ctx.reply.simple_string("OK");
}

void debug_replybuffer(CommandContext& ctx) {
  // keywarden's reply buffers do not shrink on a timer: the settings are checked and accepted.
  if (equals_ignore_case(ctx.args[2], "peak-reset-time")) {
    int64_t millis;
    if (!equals_ignore_case(ctx.args[3], "never") && !equals_ignore_case(ctx.args[3], "reset") &&
        !parse_int64(ctx.args[3], &millis)) {
      return ctx.error(errors::kNotInteger);
    }
  } else if (!equals_ignore_case(ctx.args[2], "resizing")) {
    return reply_subcommand_syntax_error(ctx);
  }
  ctx.reply.simple_string("OK");
}

void debug_stringmatch_test(CommandContext& ctx) {
  // Redis's fuzz test of its glob matcher: random patterns against random strings must not
  // crash (or, here, trip the sanitizers).
  std::mt19937 rng(12345);
  std::string pattern, text;
  for (int round = 0; round < 100000; ++round) {
    pattern.resize(rng() % 8);
    text.resize(rng() % 8);
    for (char& c : pattern) c = "a*?[]^-\\b"[rng() % 9];
    for (char& c : text) c = "ab*?[]"[rng() % 6];
    glob_match(pattern, text, rng() % 2 == 0);
  }
  ctx.reply.simple_string("Apparently Redis did not crash: test passed");
}

// --- PROTOCOL ----------------------------------------------------------------------------------

void debug_protocol(CommandContext& ctx) {
  const std::string_view name = ctx.args[2];
  ReplyWriter& reply = ctx.reply;
  const bool resp3 = ctx.session.resp == 3;
  if (equals_ignore_case(name, "string")) {
    reply.bulk("Hello World");
  } else if (equals_ignore_case(name, "integer")) {
    reply.integer(12345);
  } else if (equals_ignore_case(name, "double")) {
    reply.double_value(3.141);
  } else if (equals_ignore_case(name, "bignum")) {
    reply.big_number("1234567999999999999999999999999999999");
  } else if (equals_ignore_case(name, "null")) {
    reply.null();
  } else if (equals_ignore_case(name, "array")) {
    reply.array_header(3);
    for (int i = 0; i < 3; ++i) reply.integer(i);
  } else if (equals_ignore_case(name, "set")) {
    reply.set_header(3);
    for (int i = 0; i < 3; ++i) reply.integer(i);
  } else if (equals_ignore_case(name, "map")) {
    reply.map_header(3);
    for (int i = 0; i < 3; ++i) {
      reply.integer(i);
      reply.boolean(i == 1);
    }
  } else if (equals_ignore_case(name, "attrib")) {
    if (resp3) {
      reply.raw("|1\r\n");
      reply.bulk("key-popularity");
      reply.array_header(2);
      reply.bulk("key:123");
      reply.integer(90);
    }
    // An attribute is not a reply: a real one follows it.
    reply.bulk("Some real reply following the attribute");
  } else if (equals_ignore_case(name, "push")) {
    if (!resp3) return ctx.error("ERR RESP2 is not supported by this command");
    reply.push_header(2);
    reply.bulk("server-cpu-usage");
    reply.integer(42);
    // A push is not the command's reply: a real one follows it.
    reply.bulk("Some real reply following the push reply");
  } else if (equals_ignore_case(name, "true")) {
    reply.boolean(true);
  } else if (equals_ignore_case(name, "false")) {
    reply.boolean(false);
  } else if (equals_ignore_case(name, "verbatim")) {
    reply.verbatim("This is a verbatim\nstring");
  } else {
    ctx.error(
        "ERR Wrong protocol type name. Please use one of the following: "
        "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
  }
}

// --- MALLCTL -----------------------------------------------------------------------------------

// An integer setting (Redis 7.0's mallctl_int): read as 8 bytes, then with the size halved
// while jemalloc answers EINVAL. jemalloc also shrinks the size it is given to the width it
// copied, as Redis's loop does not expect, so in 7.0 only 8-byte settings read back: the same
// variable is halved here, to give the same replies. A write-only setting is written without a
// read.
void debug_mallctl(CommandContext& ctx) {
  const std::string name(ctx.args[2]);
  const bool write = ctx.args.size() > 3;
  int64_t wanted = 0;
  if (write && !parse_int64(ctx.args[3], &wanted)) return ctx.error(errors::kNotInteger);
  size_t size = sizeof(int64_t);
  while (size > 0) {
    int64_t old = 0;
    const size_t write_size = size;
    const int status = memory::control(name.c_str(), &old, &size, write ? &wanted : nullptr,
                                       write ? write_size : 0);
    if (status == 0) return ctx.reply.integer(old);
    if (status == EPERM && write &&
        memory::control(name.c_str(), nullptr, nullptr, &wanted, write_size) == 0) {
      return ctx.reply.simple_string("OK");
    }
    if (status != EINVAL) return ctx.error(std::string("ERR ") + std::strerror(status));
    size /= 2;
  }
  ctx.error(std::string("ERR ") + std::strerror(EINVAL));
}

// A string setting (Redis's mallctl_string): read first, then written when a value is given
// ("VOID" writes nothing but triggers the action).
void debug_mallctl_str(CommandContext& ctx) {
  const std::string name(ctx.args[2]);
  const char* old = nullptr;
  size_t size = sizeof(old);
  const int read_status = memory::control(name.c_str(), &old, &size, nullptr, 0);
  const bool write = ctx.args.size() > 3;
  if (read_status != 0 && !(read_status == EPERM && write)) {
    return ctx.error(std::string("ERR ") + std::strerror(read_status));
  }
  int write_status = 0;
  if (write) {
    const std::string value(ctx.args[3]);
    const char* text = value.c_str();
    write_status = value == "VOID"
                       ? memory::control(name.c_str(), nullptr, nullptr, nullptr, 0)
                       : memory::control(name.c_str(), nullptr, nullptr, &text, sizeof(text));
  }
  if (read_status == 0) return ctx.reply.bulk(old == nullptr ? "" : old);
  if (write_status != 0) return ctx.error(std::string("ERR ") + std::strerror(write_status));
  ctx.reply.simple_string("OK");
}

// --- LOG and HELP ------------------------------------------------------------------------------

void debug_log(CommandContext& ctx) {
  log_message(LogLevel::kWarning, "DEBUG LOG: " + std::string(ctx.args[2]));
  ctx.reply.simple_string("OK");
}

void debug_help(CommandContext& ctx) {
  // Redis 7.0's text, line for line, so that tools reading it find what they expect. Entries
  // that crash, restart or concern a cluster are listed but not implemented (docs/commands.md).
  static constexpr std::string_view kLines[] = {
      "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "AOF-FLUSH-SLEEP <microsec>",
      "    Server will sleep before flushing the AOF, this is used for testing.",
      "ASSERT",
      "    Crash by assertion failed.",
      "CHANGE-REPL-ID",
      "    Change the replication IDs of the instance.",
      "    Dangerous: should be used only for testing the replication subsystem.",
      "CONFIG-REWRITE-FORCE-ALL",
      "    Like CONFIG REWRITE but writes all configuration options, including",
      "    keywords not listed in original configuration file or default values.",
      "CRASH-AND-RECOVER [<milliseconds>]",
      "    Hard crash and restart after a <milliseconds> delay (default 0).",
      "DIGEST",
      "    Output a hex signature representing the current DB content.",
      "DIGEST-VALUE <key> [<key> ...]",
      "    Output a hex signature of the values of all the specified keys.",
      "ERROR <string>",
      "    Return a Redis protocol error with <string> as message. Useful for clients",
      "    unit tests to simulate Redis errors.",
      "LEAK <string>",
      "    Create a memory leak of the input string.",
      "LOG <message>",
      "    Write <message> to the server log.",
      "HTSTATS <dbid>",
      "    Return hash table statistics of the specified Redis database.",
      "HTSTATS-KEY <key>",
      "    Like HTSTATS but for the hash table stored at <key>'s value.",
      "LOADAOF",
      "    Flush the AOF buffers on disk and reload the AOF in memory.",
      "REPLICATE <string>",
      "    Replicates the provided string to replicas, allowing data divergence.",
      "MALLCTL <key> [<val>]",
      "    Get or set a malloc tuning integer.",
      "MALLCTL-STR <key> [<val>]",
      "    Get or set a malloc tuning string.",
      "OBJECT <key>",
      "    Show low level info about `key` and associated value.",
      "DROP-CLUSTER-PACKET-FILTER <packet-type>",
      "    Drop all packets that match the filtered type. Set to -1 allow all packets.",
      "OOM",
      "    Crash the server simulating an out-of-memory error.",
      "PANIC",
      "    Crash the server simulating a panic.",
      "POPULATE <count> [<prefix>] [<size>]",
      "    Create <count> string keys named key:<num>. If <prefix> is specified then",
      "    it is used instead of the 'key' prefix. These are not propagated to",
      "    replicas. Cluster slots are not respected so keys not belonging to the",
      "    current node can be created in cluster mode.",
      "PROTOCOL <type>",
      "    Reply with a test value of the specified type. <type> can be: string,",
      "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
      "    true, false.",
      "RELOAD [option ...]",
      "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
      "    * MERGE: conflicting keys will be loaded from RDB.",
      "    * NOFLUSH: the existing database will not be removed before load, but",
      "      conflicting keys will generate an exception and kill the server.",
      "    * NOSAVE: the database will be loaded from an existing RDB file.",
      "    Examples:",
      "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
      "      the database.",
      "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
      "      existing RDB file.",
      "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
      "      file to the database.",
      "RESTART [<milliseconds>]",
      "    Graceful restart: save config, db, restart after a <milliseconds> delay (default 0).",
      "SDSLEN <key>",
      "    Show low level SDS string info representing `key` and value.",
      "SEGFAULT",
      "    Crash the server with sigsegv.",
      "SET-ACTIVE-EXPIRE <0|1>",
      "    Setting it to 0 disables expiring keys in background when they are not",
      "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
      "    default.",
      "QUICKLIST-PACKED-THRESHOLD <size>",
      "    Sets the threshold for elements to be inserted as plain vs packed nodes",
      "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
      "SET-SKIP-CHECKSUM-VALIDATION <0|1>",
      "    Enables or disables checksum checks for RDB files and RESTORE's payload.",
      "SLEEP <seconds>",
      "    Stop the server for <seconds>. Decimals allowed.",
      "STRINGMATCH-TEST",
      "    Run a fuzz tester against the stringmatchlen() function.",
      "STRUCTSIZE",
      "    Return the size of different Redis core C structures.",
      "LISTPACK <key>",
      "    Show low level info about the listpack encoding of <key>.",
      "QUICKLIST <key> [<0|1>]",
      "    Show low level info about the quicklist encoding of <key>.",
      "    The optional argument (0 by default) sets the level of detail",
      "CLIENT-EVICTION",
      "    Show low level client eviction pools info (maxmemory-clients).",
      "PAUSE-CRON <0|1>",
      "    Stop periodic cron job processing.",
      "REPLYBUFFER PEAK-RESET-TIME <NEVER||RESET|time>",
      "    Sets the time (in milliseconds) to wait between client reply buffer peak resets.",
      "    In case NEVER is provided the last observed peak will never be reset",
      "    In case RESET is provided the peak reset time will be restored to the default value",
      "REPLYBUFFER RESIZING <0|1>",
      "    Enable or disable the reply buffer resize cron job",
      "CLUSTERLINK KILL <to|from|all> <node-id>",
      "    Kills the link based on the direction to/from (both) with the provided node.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply_status_lines(kLines);
}

// --- Dispatch ----------------------------------------------------------------------------------

struct Subcommand {
  std::string_view name;
  size_t min_args;  // DEBUG and the subcommand included
  size_t max_args;  // 0: no limit
  void (*handler)(CommandContext&);
  bool needs_allocator = false;  // MALLCTL*: only with jemalloc, as in Redis
};

constexpr Subcommand kSubcommands[] = {
    {"help", 2, 2, debug_help},
    {"reload", 2, 0, debug_reload},
    {"loadaof", 2, 0, debug_loadaof},
    {"object", 3, 3, debug_object},
    {"populate", 3, 5, debug_populate},
    {"digest", 2, 2, debug_digest},
    {"digest-value", 2, 0, debug_digest_value},
    {"protocol", 3, 3, debug_protocol},
    {"sleep", 3, 3, debug_sleep},
    {"set-active-expire", 3, 3, debug_set_active_expire},
    {"quicklist-packed-threshold", 3, 3, debug_quicklist_packed_threshold},
    {"set-disable-deny-scripts", 3, 3, debug_set_disable_deny_scripts},
    {"aof-flush-sleep", 3, 3, debug_aof_flush_sleep},
    {"config-rewrite-force-all", 2, 2, debug_config_rewrite_force_all},
    {"log", 3, 3, debug_log},
    {"htstats", 3, 3, debug_htstats},
    {"htstats-key", 3, 3, debug_htstats_key},
    {"listpack", 3, 3, debug_listpack},
    {"quicklist", 3, 4, debug_quicklist},
    {"change-repl-id", 2, 2, debug_change_repl_id},
    {"stringmatch-test", 2, 2, debug_stringmatch_test},
    {"pause-cron", 3, 3, debug_pause_cron},
    {"replybuffer", 4, 4, debug_replybuffer},
    {"mallctl", 3, 0, debug_mallctl, true},
    {"mallctl-str", 3, 0, debug_mallctl_str, true},
};

void debug_command(CommandContext& ctx) {
  const std::string_view name = ctx.args[1];
  const size_t argc = ctx.args.size();
  for (const Subcommand& sub : kSubcommands) {
    if (!equals_ignore_case(name, sub.name)) continue;
    if (argc < sub.min_args || (sub.max_args != 0 && argc > sub.max_args)) break;
    if (sub.needs_allocator && !memory::control_available()) break;
    return sub.handler(ctx);
  }
  reply_subcommand_syntax_error(ctx);
}

constexpr CommandSpec kDebugCommands[] = {
    {"debug", -2, kAdmin | kNoScript | kLoading | kStale | kProtected, 0, 0, 0, 0, debug_command,
     "server", "1.0.0", "A container for debugging commands", "Depends on subcommand."},
};

}  // namespace

void register_debug_commands(CommandTable& table) { table.add(kDebugCommands); }

}  // namespace keywarden
