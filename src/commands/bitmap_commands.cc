// Bitmap commands on string values: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and
// BITFIELD_RO, with Redis 7.0's argument checks (in its order), replies, encodings, keyspace
// events and propagation. The bit algorithms themselves live in types/bitops.
//
// A bitmap is an ordinary string: an integer-encoded value is read as its decimal text, and a
// write turns it "raw" first, as Redis's dbUnshareStringValue does. Writes propagate as
// received (they are deterministic); SETBIT and BITFIELD count, announce and propagate only
// when they changed a bit or grew the string, as Redis 7.0.15 does.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "commands/context.h"
#include "commands/errors.h"
#include "commands/families.h"
#include "common/ascii.h"
#include "common/number.h"
#include "types/bitops.h"
#include "types/value.h"

namespace keywarden {
namespace {

using bitops::Overflow;
using bitops::Unit;

// Keywords compare the way Redis reads them, as C strings (strcasecmp): an argument ends at
// its first NUL byte.
bool is_keyword(std::string_view arg, std::string_view keyword) {
  size_t nul = arg.find('\0');
  if (nul != std::string_view::npos) arg = arg.substr(0, nul);
  return equals_ignore_case(arg, keyword);
}

bool is_string(const Entry* entry) { return entry->value.type() == ValueType::kString; }

// A string's bytes for reading; an integer-encoded value is formatted into `scratch`.
std::string_view read_bytes(const Entry* entry, char (&scratch)[kInt64BufferSize]) {
  return entry->value.string_view(scratch);
}

// Redis's getBitOffsetFromArgument: a non-negative integer whose byte lies below
// proto-max-bulk-len. With `bits` (BITFIELD), "#n" means field n: n * bits, wrapping on
// overflow as Redis's C does. Redis 7.0 skips the limit for what it must obey (its primary,
// its AOF); here the limit holds for them too, as for SETRANGE: an offset near 2^63 from a
// hostile or corrupt stream would otherwise ask for an exabyte and end the process.
bool parse_bit_offset(CommandContext& ctx, std::string_view arg, unsigned bits,
                      uint64_t* offset) {
  const bool field_index = bits > 0 && !arg.empty() && arg[0] == '#';
  int64_t value;
  if (!parse_int64(field_index ? arg.substr(1) : arg, &value)) {
    ctx.error(errors::kBitOffsetInvalid);
    return false;
  }
  if (field_index) value = static_cast<int64_t>(static_cast<uint64_t>(value) * bits);
  if (value < 0 || (value >> 3) >= ctx.server.settings().proto_max_bulk_len) {
    ctx.error(errors::kBitOffsetInvalid);
    return false;
  }
  *offset = static_cast<uint64_t>(value);
  return true;
}

// Looks `key` up for a bit write reaching bit `highest_bit`: creates it or pads it with zero
// bytes so that the bit exists, raw-encoded. Null after a WRONGTYPE reply. *grown tells
// whether the string was created or lengthened.
Entry* string_for_bit_write(CommandContext& ctx, std::string_view key, uint64_t highest_bit,
                            bool* grown) {
  const size_t needed = static_cast<size_t>(highest_bit >> 3) + 1;
  Entry* entry = ctx.lookup_write(key);
  if (entry == nullptr) {
    Value value = Value::make_raw({});
    value.zero_extend(needed);
    entry = ctx.db().add(key, std::move(value));
    ctx.created(key);
    *grown = true;
    return entry;
  }
  if (!is_string(entry)) {
    ctx.error(errors::kWrongType);
    return nullptr;
  }
  const size_t old_length = entry->value.string_length();
  entry->value.zero_extend(needed);
  *grown = needed > old_length;
  return entry;
}

// --- SETBIT / GETBIT ---------------------------------------------------------------------------

void setbit_command(CommandContext& ctx) {
  uint64_t offset;
  if (!parse_bit_offset(ctx, ctx.args[2], 0, &offset)) return;
  int64_t on;
  if (!parse_int64(ctx.args[3], &on) || (on & ~int64_t{1}) != 0) {
    return ctx.error(errors::kBitValueInvalid);
  }
  std::string_view key = ctx.args[1];
  bool grown;
  Entry* entry = string_for_bit_write(ctx, key, offset, &grown);
  if (entry == nullptr) return;
  auto* bytes = reinterpret_cast<uint8_t*>(entry->value.zero_extend(0));
  const uint64_t byte = offset >> 3;
  const auto mask = static_cast<uint8_t>(0x80 >> (offset & 7));
  const bool was_set = (bytes[byte] & mask) != 0;
  if (grown || was_set != (on == 1)) {
    bytes[byte] = static_cast<uint8_t>(on ? bytes[byte] | mask : bytes[byte] & ~mask);
    ctx.changed(key, kNotifyString, "setbit");
  }
  ctx.reply.integer(was_set ? 1 : 0);
}

void getbit_command(CommandContext& ctx) {
  uint64_t offset;
  if (!parse_bit_offset(ctx, ctx.args[2], 0, &offset)) return;
  const Entry* entry = ctx.lookup_read(ctx.args[1]);
  if (entry == nullptr) return ctx.reply.integer(0);
  if (!is_string(entry)) return ctx.error(errors::kWrongType);
  char scratch[kInt64BufferSize];
  std::string_view bytes = read_bytes(entry, scratch);
  const uint64_t byte = offset >> 3;
  const bool set =
      byte < bytes.size() && (static_cast<uint8_t>(bytes[byte]) & (0x80 >> (offset & 7))) != 0;
  ctx.reply.integer(set ? 1 : 0);
}

// --- BITCOUNT / BITPOS -------------------------------------------------------------------------

// Reads an optional BYTE|BIT argument; false after a syntax error reply.
bool parse_unit(CommandContext& ctx, std::string_view arg, Unit* unit) {
  if (is_keyword(arg, "bit")) {
    *unit = Unit::kBit;
  } else if (is_keyword(arg, "byte")) {
    *unit = Unit::kByte;
  } else {
    ctx.error(errors::kSyntax);
    return false;
  }
  return true;
}

// Redis 7.0 looks the key up before reading the range: a missing key answers 0 whatever the
// range arguments say.
void bitcount_command(CommandContext& ctx) {
  const Entry* entry = ctx.lookup_read(ctx.args[1]);
  if (entry == nullptr) return ctx.reply.integer(0);
  if (!is_string(entry)) return ctx.error(errors::kWrongType);
  char scratch[kInt64BufferSize];
  std::string_view bytes = read_bytes(entry, scratch);
  const size_t argc = ctx.args.size();
  if (argc == 2) {
    return ctx.reply.integer(static_cast<int64_t>(
        bitops::count_ones(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())));
  }
  if (argc != 4 && argc != 5) return ctx.error(errors::kSyntax);
  int64_t start, end;
  if (!parse_int64(ctx.args[2], &start) || !parse_int64(ctx.args[3], &end)) {
    return ctx.error(errors::kNotInteger);
  }
  // Crossed negative ends answer 0 before the unit is even read.
  if (start < 0 && end < 0 && start > end) return ctx.reply.integer(0);
  Unit unit = Unit::kByte;
  if (argc == 5 && !parse_unit(ctx, ctx.args[4], &unit)) return;
  ctx.reply.integer(bitops::count_range(bytes, start, end, unit));
}

// The bit argument is read first; then, as for BITCOUNT, a missing key answers before the
// range is read (an endless run of zeros: 0 for a clear bit, -1 for a set one).
void bitpos_command(CommandContext& ctx) {
  int64_t bit;
  if (!parse_int64(ctx.args[2], &bit)) return ctx.error(errors::kNotInteger);
  if (bit != 0 && bit != 1) return ctx.error(errors::kBitArgumentInvalid);
  const Entry* entry = ctx.lookup_read(ctx.args[1]);
  if (entry == nullptr) return ctx.reply.integer(bit ? -1 : 0);
  if (!is_string(entry)) return ctx.error(errors::kWrongType);
  char scratch[kInt64BufferSize];
  std::string_view bytes = read_bytes(entry, scratch);
  const size_t argc = ctx.args.size();
  if (argc > 6) return ctx.error(errors::kSyntax);
  int64_t start = 0;
  std::optional<int64_t> end;
  Unit unit = Unit::kByte;
  if (argc >= 4) {
    if (!parse_int64(ctx.args[3], &start)) return ctx.error(errors::kNotInteger);
    if (argc == 6 && !parse_unit(ctx, ctx.args[5], &unit)) return;
    if (argc >= 5) {
      int64_t given;
      if (!parse_int64(ctx.args[4], &given)) return ctx.error(errors::kNotInteger);
      end = given;
    }
  }
  ctx.reply.integer(bitops::find_in_range(bytes, bit == 1, start, end, unit));
}

// --- BITOP -------------------------------------------------------------------------------------

void bitop_command(CommandContext& ctx) {
  std::string_view name = ctx.args[1];
  bitops::Op op;
  if (is_keyword(name, "and")) {
    op = bitops::Op::kAnd;
  } else if (is_keyword(name, "or")) {
    op = bitops::Op::kOr;
  } else if (is_keyword(name, "xor")) {
    op = bitops::Op::kXor;
  } else if (is_keyword(name, "not")) {
    op = bitops::Op::kNot;
  } else {
    return ctx.error(errors::kSyntax);
  }
  if (op == bitops::Op::kNot && ctx.args.size() != 4) {
    return ctx.error(errors::kBitopNotSingleKey);
  }
  const std::span<const std::string_view> keys = ctx.args.subspan(3);
  // Integer-encoded sources are read as their decimal text, each in its own buffer.
  struct Scratch {
    char bytes[kInt64BufferSize];
  };
  std::vector<Scratch> scratch(keys.size());
  std::vector<std::string_view> sources(keys.size());
  size_t longest = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const Entry* entry = ctx.lookup_read(keys[i]);
    if (entry == nullptr) continue;  // a missing key is an empty string
    if (!is_string(entry)) return ctx.error(errors::kWrongType);
    sources[i] = entry->value.string_view(scratch[i].bytes);
    longest = std::max(longest, sources[i].size());
  }

  std::string_view destination = ctx.args[2];
  Database& db = ctx.db();
  if (longest == 0) {
    // Every source empty or missing: the destination is deleted, not set to "".
    if (db.remove(destination)) ctx.changed(destination, kNotifyGeneric, "del");
    return ctx.reply.integer(0);
  }
  Value result = Value::make_raw({});
  bitops::combine(op, sources, reinterpret_cast<uint8_t*>(result.extend_for_overwrite(longest)));
  if (Entry* entry = ctx.lookup_write(destination)) {
    entry = db.overwrite(entry, std::move(result), /*keep_ttl=*/false,
                         ctx.server.settings().lazyfree_lazy_server_del);
  } else {
    db.add(destination, std::move(result));
    ctx.created(destination);
  }
  ctx.changed(destination, kNotifyString, "set");
  ctx.reply.integer(static_cast<int64_t>(longest));
}

// --- BITFIELD / BITFIELD_RO --------------------------------------------------------------------

enum class FieldOp : uint8_t { kGet, kSet, kIncrBy };

struct FieldOperation {
  FieldOp op;
  Overflow overflow;
  bool is_signed;
  unsigned bits;
  uint64_t offset;
  int64_t operand;  // SET's value or INCRBY's increment
};

// "i1".."i64" or "u1".."u63" (u64 is refused: its values would not fit a RESP integer).
bool parse_field_type(CommandContext& ctx, std::string_view arg, bool* is_signed,
                      unsigned* bits) {
  // Redis reads the width as a C string: it stops at a NUL byte.
  size_t nul = arg.find('\0');
  if (nul != std::string_view::npos) arg = arg.substr(0, nul);
  int64_t width;
  if (arg.empty() || (arg[0] != 'i' && arg[0] != 'u') || !parse_int64(arg.substr(1), &width) ||
      width < 1 || width > (arg[0] == 'i' ? 64 : 63)) {
    ctx.error(errors::kBitfieldTypeInvalid);
    return false;
  }
  *is_signed = arg[0] == 'i';
  *bits = static_cast<unsigned>(width);
  return true;
}

// Reads every subcommand before touching the key, so that any argument error leaves the key
// alone; false after the error reply. *highest_bit is the farthest bit a write reaches, and
// *writes whether there is any.
bool parse_bitfield(CommandContext& ctx, std::vector<FieldOperation>* operations, bool* writes,
                    uint64_t* highest_bit) {
  Overflow overflow = Overflow::kWrap;
  const size_t argc = ctx.args.size();
  for (size_t i = 2; i < argc; ++i) {
    const size_t remaining = argc - i - 1;
    std::string_view name = ctx.args[i];
    FieldOp op;
    if (is_keyword(name, "get") && remaining >= 2) {
      op = FieldOp::kGet;
    } else if (is_keyword(name, "set") && remaining >= 3) {
      op = FieldOp::kSet;
    } else if (is_keyword(name, "incrby") && remaining >= 3) {
      op = FieldOp::kIncrBy;
    } else if (is_keyword(name, "overflow") && remaining >= 1) {
      std::string_view kind = ctx.args[++i];
      if (is_keyword(kind, "wrap")) {
        overflow = Overflow::kWrap;
      } else if (is_keyword(kind, "sat")) {
        overflow = Overflow::kSat;
      } else if (is_keyword(kind, "fail")) {
        overflow = Overflow::kFail;
      } else {
        ctx.error(errors::kBitfieldOverflowInvalid);
        return false;
      }
      continue;
    } else {
      ctx.error(errors::kSyntax);
      return false;
    }
    FieldOperation operation{op, overflow, false, 0, 0, 0};
    if (!parse_field_type(ctx, ctx.args[i + 1], &operation.is_signed, &operation.bits)) {
      return false;
    }
    if (!parse_bit_offset(ctx, ctx.args[i + 2], operation.bits, &operation.offset)) return false;
    if (op != FieldOp::kGet) {
      *writes = true;
      *highest_bit = std::max(*highest_bit, operation.offset + operation.bits - 1);
      if (!parse_int64(ctx.args[i + 3], &operation.operand)) {
        ctx.error(errors::kNotInteger);
        return false;
      }
    }
    operations->push_back(operation);
    i += op == FieldOp::kGet ? 2 : 3;
  }
  return true;
}

enum class WriteOutcome : uint8_t { kRefused, kUnchanged, kChanged };

// Runs a SET or INCRBY on `bytes` and replies with its result (null when OVERFLOW FAIL
// refused it).
WriteOutcome apply_field_write(CommandContext& ctx, const FieldOperation& f, uint8_t* bytes,
                       size_t length) {
  if (f.is_signed) {
    const int64_t old_value = bitops::get_signed(bytes, length, f.offset, f.bits);
    int64_t new_value, limited = 0;
    int overflowed;
    if (f.op == FieldOp::kIncrBy) {
      overflowed = bitops::check_signed(old_value, f.operand, f.bits, f.overflow, &limited);
      new_value = overflowed ? limited
                             : static_cast<int64_t>(static_cast<uint64_t>(old_value) +
                                                    static_cast<uint64_t>(f.operand));
    } else {
      overflowed = bitops::check_signed(f.operand, 0, f.bits, f.overflow, &limited);
      new_value = overflowed ? limited : f.operand;
    }
    if (overflowed && f.overflow == Overflow::kFail) {
      ctx.reply.null();
      return WriteOutcome::kRefused;
    }
    ctx.reply.integer(f.op == FieldOp::kIncrBy ? new_value : old_value);
    bitops::set_signed(bytes, f.offset, f.bits, new_value);
    return old_value != new_value ? WriteOutcome::kChanged : WriteOutcome::kUnchanged;
  }
  const uint64_t old_value = bitops::get_unsigned(bytes, length, f.offset, f.bits);
  uint64_t new_value, limited = 0;
  int overflowed;
  if (f.op == FieldOp::kIncrBy) {
    overflowed = bitops::check_unsigned(old_value, f.operand, f.bits, f.overflow, &limited);
    new_value = overflowed ? limited : old_value + static_cast<uint64_t>(f.operand);
  } else {
    overflowed =
        bitops::check_unsigned(static_cast<uint64_t>(f.operand), 0, f.bits, f.overflow, &limited);
    new_value = overflowed ? limited : static_cast<uint64_t>(f.operand);
  }
  if (overflowed && f.overflow == Overflow::kFail) {
    ctx.reply.null();
    return WriteOutcome::kRefused;
  }
  // An unsigned field is at most 63 bits wide, so its value fits a signed reply.
  ctx.reply.integer(static_cast<int64_t>(f.op == FieldOp::kIncrBy ? new_value : old_value));
  bitops::set_unsigned(bytes, f.offset, f.bits, new_value);
  return old_value != new_value ? WriteOutcome::kChanged : WriteOutcome::kUnchanged;
}

void reply_field_get(CommandContext& ctx, const FieldOperation& f, std::string_view bytes) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  if (f.is_signed) {
    ctx.reply.integer(bitops::get_signed(data, bytes.size(), f.offset, f.bits));
  } else {
    ctx.reply.integer(
        static_cast<int64_t>(bitops::get_unsigned(data, bytes.size(), f.offset, f.bits)));
  }
}

void bitfield_generic(CommandContext& ctx, bool read_only_command) {
  std::vector<FieldOperation> operations;
  bool writes = false;
  uint64_t highest_bit = 0;
  if (!parse_bitfield(ctx, &operations, &writes, &highest_bit)) return;
  std::string_view key = ctx.args[1];

  if (!writes) {
    const Entry* entry = ctx.lookup_read(key);
    if (entry != nullptr && !is_string(entry)) return ctx.error(errors::kWrongType);
    char scratch[kInt64BufferSize];
    std::string_view bytes = entry != nullptr ? read_bytes(entry, scratch) : std::string_view();
    ctx.reply.array_header(operations.size());
    for (const FieldOperation& f : operations) reply_field_get(ctx, f, bytes);
    return;
  }
  if (read_only_command) return ctx.error(errors::kBitfieldReadOnly);

  // The string grows to the farthest bit any write reaches, even a write that OVERFLOW FAIL
  // then refuses, as in Redis.
  bool grown;
  Entry* entry = string_for_bit_write(ctx, key, highest_bit, &grown);
  if (entry == nullptr) return;
  const size_t length = entry->value.string_length();
  auto* bytes = reinterpret_cast<uint8_t*>(entry->value.zero_extend(0));
  uint64_t changes = 0;
  ctx.reply.array_header(operations.size());
  for (const FieldOperation& f : operations) {
    if (f.op == FieldOp::kGet) {
      reply_field_get(ctx, f, {reinterpret_cast<const char*>(bytes), length});
    } else {
      // A write that was carried out counts when it changed the field, or when this command
      // created or lengthened the string; a refused one (FAIL) never does.
      const WriteOutcome outcome = apply_field_write(ctx, f, bytes, length);
      if (outcome == WriteOutcome::kChanged || (outcome == WriteOutcome::kUnchanged && grown)) {
        ++changes;
      }
    }
  }
  if (changes > 0) ctx.changed(key, kNotifyString, "setbit", changes);
}

void bitfield_command(CommandContext& ctx) { bitfield_generic(ctx, false); }
void bitfield_ro_command(CommandContext& ctx) { bitfield_generic(ctx, true); }

constexpr CommandSpec kBitmapCommands[] = {
    {"setbit", 4, kWrite | kDenyOom, 1, 1, 1, kAclBitmap, setbit_command, "bitmap", "2.2.0",
     "Sets or clears the bit at offset in the string value stored at key", "O(1)"},
    {"getbit", 3, kReadonly | kFast, 1, 1, 1, kAclBitmap, getbit_command, "bitmap", "2.2.0",
     "Returns the bit value at offset in the string value stored at key", "O(1)"},
    {"bitcount", -2, kReadonly, 1, 1, 1, kAclBitmap, bitcount_command, "bitmap", "2.6.0",
     "Count set bits in a string", "O(N)"},
    {"bitpos", -3, kReadonly, 1, 1, 1, kAclBitmap, bitpos_command, "bitmap", "2.8.7",
     "Find first bit set or clear in a string", "O(N)"},
    {"bitop", -4, kWrite | kDenyOom, 2, -1, 1, kAclBitmap, bitop_command, "bitmap", "2.6.0",
     "Perform bitwise operations between strings", "O(N)"},
    {"bitfield", -2, kWrite | kDenyOom, 1, 1, 1, kAclBitmap, bitfield_command, "bitmap", "3.2.0",
     "Perform arbitrary bitfield integer operations on strings",
     "O(1) for each subcommand specified"},
    {"bitfield_ro", -2, kReadonly | kFast, 1, 1, 1, kAclBitmap, bitfield_ro_command, "bitmap",
     "6.0.0",
     "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD",
     "O(1) for each subcommand specified"},
};

}  // namespace

void register_bitmap_commands(CommandTable& table) { table.add(kBitmapCommands); }

}  // namespace keywarden
