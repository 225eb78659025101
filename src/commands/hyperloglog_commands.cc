// HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST, over string values in
// Redis's HLL representation (types/hyperloglog.h), with Redis 7.0's replies, errors, events
// and propagation.
//
// An HLL is a plain string, so each command first checks that the string is one (-WRONGTYPE
// "Key is not a valid HyperLogLog string value." when not) and reports sparse opcodes that do
// not add up as -INVALIDOBJ. Edits happen in place where Redis edits in place: the value turns
// "raw" like any string Redis unshares, even when nothing changes. PFCOUNT of one key writes
// the refreshed cache back into the value, which counts as a change (propagated as received,
// as Redis propagates it) though PFCOUNT is a read command; PFMERGE fires `pfadd`, as Redis.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "commands/context.h"
#include "commands/errors.h"
#include "commands/families.h"
#include "common/ascii.h"
#include "types/hyperloglog.h"
#include "types/value.h"

namespace keywarden {
namespace {

// Redis's isHLLObjectOrReply: a string, not integer-encoded, with a valid HLL header. Replies
// the error and returns false otherwise.
bool check_hll(CommandContext& ctx, const Entry* entry) {
  if (entry->value.type() != ValueType::kString) {
    ctx.error(errors::kWrongType);
    return false;
  }
  char scratch[kInt64BufferSize];
  if (entry->value.is_int() || !hll::is_hll(entry->value.string_view(scratch))) {
    ctx.error(errors::kNotHll);
    return false;
  }
  return true;
}

std::string_view bytes_of(const Entry* entry) {
  char scratch[kInt64BufferSize];
  // Never an integer here (check_hll), so the view points into the value itself.
  return entry->value.string_view(scratch);
}

int64_t sparse_max_bytes(CommandContext& ctx) { return ctx.server.settings().hll_sparse_max_bytes; }

void pfadd_command(CommandContext& ctx) {
  const std::string_view key = ctx.args[1];
  const auto elements = ctx.args.subspan(2);
  Entry* entry = ctx.lookup_write(key);
  uint64_t updated = 0;
  bool corrupt = false;
  if (entry != nullptr) {
    if (!check_hll(ctx, entry)) return;
    char* bytes = entry->value.mutable_bytes();
    if (hll::encoding(bytes_of(entry)) == hll::kEncodingDense) {
      // The common case of a large HLL: edit the registers where they are.
      auto* registers = reinterpret_cast<uint8_t*>(bytes) + hll::kHeaderSize;
      for (std::string_view element : elements) {
        uint32_t index;
        const uint8_t count = hll::pattern_length(element, &index);
        if (hll::dense_raise(registers, index, count)) ++updated;
      }
      if (updated > 0) hll::invalidate_cache(bytes);
    } else {
      hll::EditBuffer work{std::string(bytes_of(entry))};
      const int64_t max_bytes = sparse_max_bytes(ctx);
      for (std::string_view element : elements) {
        const hll::Update result = hll::add(work, element, max_bytes);
        if (result == hll::Update::kCorrupt) {
          corrupt = true;
          break;
        }
        if (result == hll::Update::kChanged) ++updated;
      }
      if (updated > 0 && !corrupt) hll::invalidate_cache(work.bytes.data());
      // Even a corrupt HLL keeps the edits made before the corruption was met, as in Redis.
      if (updated > 0 || corrupt) entry->value = Value::make_raw(work.bytes);
    }
  } else {
    hll::EditBuffer work{hll::make_empty()};
    const int64_t max_bytes = sparse_max_bytes(ctx);
    // Creating the key is a change of its own, even with no elements.
    updated = 1;
    for (std::string_view element : elements) {
      if (hll::add(work, element, max_bytes) == hll::Update::kChanged) ++updated;
    }
    hll::invalidate_cache(work.bytes.data());
    ctx.db().add(key, Value::make_raw(work.bytes));
    ctx.created(key);
  }
  if (corrupt) return ctx.error(errors::kCorruptHll);
  if (updated > 0) ctx.changed(key, kNotifyString, "pfadd", updated);
  ctx.reply.integer(updated > 0 ? 1 : 0);
}

void pfcount_command(CommandContext& ctx) {
  if (ctx.args.size() > 2) {
    // The cardinality of the union: one byte per register, the maximum over all keys.
    uint8_t max[hll::kRegisters] = {};
    for (size_t i = 1; i < ctx.args.size(); ++i) {
      const Entry* entry = ctx.lookup_read(ctx.args[i]);
      if (entry == nullptr) continue;
      if (!check_hll(ctx, entry)) return;
      if (!hll::merge_into(bytes_of(entry), max)) return ctx.error(errors::kCorruptHll);
    }
    return ctx.reply.integer(static_cast<int64_t>(hll::estimate_registers(max)));
  }
  const std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_read(key);
  if (entry == nullptr) return ctx.reply.integer(0);
  if (!check_hll(ctx, entry)) return;
  char* bytes = entry->value.mutable_bytes();
  const std::string_view hll_bytes = bytes_of(entry);
  uint64_t cardinality;
  if (!hll::cached_cardinality(hll_bytes, &cardinality)) {
    if (!hll::estimate(hll_bytes, &cardinality)) return ctx.error(errors::kCorruptHll);
    hll::store_cardinality(bytes, cardinality);
    ctx.changed_without_event(key);
  }
  ctx.reply.integer(static_cast<int64_t>(cardinality));
}

void pfmerge_command(CommandContext& ctx) {
  uint8_t max[hll::kRegisters] = {};
  bool use_dense = false;
  for (size_t i = 1; i < ctx.args.size(); ++i) {
    const Entry* entry = ctx.lookup_read(ctx.args[i]);
    if (entry == nullptr) continue;
    if (!check_hll(ctx, entry)) return;
    const std::string_view bytes = bytes_of(entry);
    // One dense input makes the target dense at once rather than by promotion later.
    if (hll::encoding(bytes) == hll::kEncodingDense) use_dense = true;
    if (!hll::merge_into(bytes, max)) return ctx.error(errors::kCorruptHll);
  }
  const std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_write(key);
  if (entry != nullptr && hll::encoding(bytes_of(entry)) == hll::kEncodingDense) {
    // The target was one of the inputs, so the union is at least its registers everywhere:
    // the union is its new registers, written over the old ones in place.
    char* bytes = entry->value.mutable_bytes();
    hll::store_dense_registers(reinterpret_cast<uint8_t*>(bytes) + hll::kHeaderSize, max);
    hll::invalidate_cache(bytes);
  } else {
    // The target was one of the inputs, so an existing one is a valid HLL.
    hll::EditBuffer work{entry != nullptr ? std::string(bytes_of(entry)) : hll::make_empty()};
    if (entry == nullptr) {
      entry = ctx.db().add(key, Value());
      ctx.created(key);
    }
    if (use_dense) {
      hll::sparse_to_dense(work.bytes);
      hll::store_dense_registers(reinterpret_cast<uint8_t*>(work.bytes.data()) + hll::kHeaderSize,
                                 max);
    } else {
      // Register by register, as Redis writes the union into a sparse target: the order of
      // the edits decides its bytes (and may promote it).
      const int64_t max_bytes = sparse_max_bytes(ctx);
      for (uint32_t i = 0; i < hll::kRegisters; ++i) {
        if (max[i] != 0) hll::raise_register(work, i, max[i], max_bytes);
      }
    }
    hll::invalidate_cache(work.bytes.data());
    entry->value = Value::make_raw(work.bytes);
  }
  ctx.changed(key, kNotifyString, "pfadd");
  ctx.reply.simple_string("OK");
}

void pfdebug_command(CommandContext& ctx) {
  const std::string_view subcommand = ctx.args[1];
  const std::string_view key = ctx.args[2];
  Entry* entry = ctx.lookup_write(key);
  if (entry == nullptr) return ctx.error(errors::kPfdebugNoKey);
  if (!check_hll(ctx, entry)) return;
  entry->value.mutable_bytes();
  const std::string_view bytes = bytes_of(entry);
  const bool sparse = hll::encoding(bytes) == hll::kEncodingSparse;

  // Converts a sparse value to dense in place; false after an INVALIDOBJ reply. Redis counts
  // the conversion as a change (so it propagates) but does not signal the key; keywarden also
  // tells WATCH, since the value's bytes did change (a transaction watching it fails here,
  // and succeeds on Redis).
  auto make_dense = [&]() -> bool {
    std::string work(bytes);
    if (!hll::sparse_to_dense(work)) {
      ctx.error(errors::kCorruptHll);
      return false;
    }
    entry->value = Value::make_raw(work);
    ctx.changed_without_event(key);
    return true;
  };

  if (equals_ignore_case(subcommand, "getreg")) {
    if (sparse && !make_dense()) return;
    const auto* registers = reinterpret_cast<const uint8_t*>(bytes_of(entry).data()) +
                            hll::kHeaderSize;
    ctx.reply.array_header(hll::kRegisters);
    for (uint32_t i = 0; i < hll::kRegisters; ++i) {
      ctx.reply.integer(hll::dense_get(registers, i));
    }
  } else if (equals_ignore_case(subcommand, "decode")) {
    if (!sparse) return ctx.error(errors::kHllNotSparse);
    ctx.reply.bulk(hll::decode_sparse(bytes));
  } else if (equals_ignore_case(subcommand, "encoding")) {
    ctx.reply.simple_string(sparse ? "sparse" : "dense");
  } else if (equals_ignore_case(subcommand, "todense")) {
    if (sparse && !make_dense()) return;
    ctx.reply.integer(sparse ? 1 : 0);
  } else {
    // Redis prints the subcommand as a C string: up to its first NUL byte.
    const std::string_view shown = subcommand.substr(0, subcommand.find('\0'));
    ctx.error("ERR Unknown PFDEBUG subcommand '" + std::string(shown) + "'");
  }
}

void pfselftest_command(CommandContext& ctx) {
  const std::string failure = hll::self_test(sparse_max_bytes(ctx));
  if (!failure.empty()) return ctx.error(failure);
  ctx.reply.simple_string("OK");
}

constexpr CommandSpec kHyperLogLogCommands[] = {
    {"pfadd", -2, kWrite | kDenyOom | kFast, 1, 1, 1, kAclHyperLogLog, pfadd_command,
     "hyperloglog", "2.8.9", "Adds the specified elements to the specified HyperLogLog.",
     "O(1) to add every element."},
    // May replicate: refreshing the cache writes the value (read-only scripts and CLIENT PAUSE
    // WRITE refuse it as a write, as Redis does; COMMAND INFO does not show the flag).
    {"pfcount", -2, kReadonly | kMayReplicate, 1, -1, 1, kAclHyperLogLog, pfcount_command, "hyperloglog",
     "2.8.9",
     "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).",
     "O(1) with a very small average constant time when called with a single key. O(N) with N "
     "being the number of keys, and much bigger constant times, when called with multiple "
     "keys."},
    {"pfmerge", -2, kWrite | kDenyOom, 1, -1, 1, kAclHyperLogLog, pfmerge_command, "hyperloglog",
     "2.8.9", "Merge N different HyperLogLogs into a single one.",
     "O(N) to merge N HyperLogLogs, but with high constant times."},
    {"pfdebug", 3, kWrite | kDenyOom | kAdmin, 2, 2, 1, kAclHyperLogLog, pfdebug_command,
     "hyperloglog", "2.8.9", "Internal commands for debugging HyperLogLog values", "N/A"},
    {"pfselftest", 1, kAdmin, 0, 0, 0, kAclHyperLogLog, pfselftest_command, "hyperloglog",
     "2.8.9", "An internal command for testing HyperLogLog values", "N/A"},
};

}  // namespace

void register_hyperloglog_commands(CommandTable& table) { table.add(kHyperLogLogCommands); }

}  // namespace keywarden
