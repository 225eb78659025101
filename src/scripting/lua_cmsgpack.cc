// The `cmsgpack` library of Redis scripts: MessagePack encoding and decoding of Lua values
// (pack, unpack, unpack_one, unpack_limit) with the behaviour of lua-cmsgpack 0.4.0 as Redis
// 7.0 embeds it. Our own implementation against the Lua 5.1 C API.
//
// Encoding rules: a number that is a whole value within int64 becomes the smallest integer
// format (positive fixint, uint8..64 for n >= 0; negative fixint, int8..64 below zero); any
// other number becomes a float32 when that loses nothing, else a float64. Strings use fixstr /
// str8 / str16 / str32. A table whose keys are exactly the integers 1..N is an array, anything
// else a map (so {} packs as an empty array). Tables nested 16 deep, and values MessagePack
// has no type for (nil, functions, userdata, threads), become nil. Decoding accepts those
// formats plus nil/true/false; bin, ext and 0xc1 are "Bad data format in input.".
//
// Lua errors longjmp: encoding collects into Lua-owned memory (a userdata) and decoding
// pushes straight onto the Lua stack, so nothing with a destructor is live when one is raised.
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

#include "scripting/lua_libraries.h"

namespace keywarden {
namespace {

constexpr int kMaxNesting = 16;

constexpr char kTooManyValues[] =
    "too many return values at once; use unpack_one or unpack_limit instead.";

// ---- encoding -------------------------------------------------------------------------------

// Output bytes in a Lua userdata kept in a fixed stack slot: a luaL_Buffer would move the
// stack top under the values being encoded, and malloc'ed memory would leak when an error
// longjmps out. Growing allocates a larger userdata and lets the old one be collected.
struct PackBuffer {
  lua_State* lua;
  int slot;  // absolute stack index holding the current userdata
  unsigned char* data;
  size_t size;
  size_t capacity;
};

void init_buffer(lua_State* lua, PackBuffer* out) {
  out->lua = lua;
  out->capacity = 64;
  out->data = static_cast<unsigned char*>(lua_newuserdata(lua, out->capacity));
  out->slot = lua_gettop(lua);
  out->size = 0;
}

void put_bytes(PackBuffer* out, const void* bytes, size_t length) {
  if (length > out->capacity - out->size) {
    size_t needed = out->size + length;
    if (needed < out->size || needed > SIZE_MAX / 2) luaL_error(out->lua, "not enough memory");
    size_t capacity = needed * 2;
    luaL_checkstack(out->lua, 1, "in function mp_buf_append");
    auto* grown = static_cast<unsigned char*>(lua_newuserdata(out->lua, capacity));
    std::memcpy(grown, out->data, out->size);
    lua_replace(out->lua, out->slot);
    out->data = grown;
    out->capacity = capacity;
  }
  std::memcpy(out->data + out->size, bytes, length);
  out->size += length;
}

// Writes `tag` followed by the low `width` bytes of `value`, big endian.
void put_tagged(PackBuffer* out, unsigned char tag, uint64_t value, int width) {
  unsigned char bytes[9];
  bytes[0] = tag;
  for (int i = 0; i < width; ++i) {
    bytes[1 + i] = static_cast<unsigned char>(value >> (8 * (width - 1 - i)));
  }
  put_bytes(out, bytes, 1 + width);
}

void encode_integer(PackBuffer* out, int64_t n) {
  uint64_t bits = static_cast<uint64_t>(n);
  if (n >= 0) {
    if (n <= 127) {
      put_tagged(out, static_cast<unsigned char>(n), 0, 0);
    } else if (n <= 0xff) {
      put_tagged(out, 0xcc, bits, 1);
    } else if (n <= 0xffff) {
      put_tagged(out, 0xcd, bits, 2);
    } else if (n <= 0xffffffffLL) {
      put_tagged(out, 0xce, bits, 4);
    } else {
      put_tagged(out, 0xcf, bits, 8);
    }
  } else {
    if (n >= -32) {
      put_tagged(out, static_cast<unsigned char>(bits & 0xff), 0, 0);
    } else if (n >= -128) {
      put_tagged(out, 0xd0, bits, 1);
    } else if (n >= -32768) {
      put_tagged(out, 0xd1, bits, 2);
    } else if (n >= -2147483648LL) {
      put_tagged(out, 0xd2, bits, 4);
    } else {
      put_tagged(out, 0xd3, bits, 8);
    }
  }
}

void encode_floating(PackBuffer* out, double d) {
  float f = static_cast<float>(d);
  if (d == static_cast<double>(f)) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    put_tagged(out, 0xca, bits, 4);
  } else {
    uint64_t bits;
    std::memcpy(&bits, &d, 8);
    put_tagged(out, 0xcb, bits, 8);
  }
}

// Whether `n` converts to int64 and back unchanged. Out-of-range conversions on x86-64 give
// INT64_MIN, which compares equal only to -2^63 itself: the range test says the same.
bool is_int64_value(double n) {
  return n >= -9223372036854775808.0 && n < 9223372036854775808.0 && std::trunc(n) == n;
}

void encode_number(PackBuffer* out, double n) {
  if (is_int64_value(n)) {
    encode_integer(out, static_cast<int64_t>(n));
  } else {
    encode_floating(out, n);
  }
}

void encode_string(PackBuffer* out, const char* s, size_t length) {
  if (length < 32) {
    put_tagged(out, static_cast<unsigned char>(0xa0 | length), 0, 0);
  } else if (length <= 0xff) {
    put_tagged(out, 0xd9, length, 1);
  } else if (length <= 0xffff) {
    put_tagged(out, 0xda, length, 2);
  } else {
    put_tagged(out, 0xdb, length, 4);
  }
  put_bytes(out, s, length);
}

// Array and map headers: fix form up to 15 entries, then 16 and 32-bit counts.
void encode_container_header(PackBuffer* out, uint64_t count, unsigned char fix_tag,
                             unsigned char tag16, unsigned char tag32) {
  if (count <= 15) {
    put_tagged(out, static_cast<unsigned char>(fix_tag | count), 0, 0);
  } else if (count <= 0xffff) {
    put_tagged(out, tag16, count, 2);
  } else {
    put_tagged(out, tag32, count, 4);
  }
}

// An array is a table whose keys are all numbers with whole values in 1..INT_MAX, the largest
// of which equals the number of keys (hence 1..N without holes). Table at `index` (absolute).
bool table_is_array(lua_State* lua, int index) {
  luaL_checkstack(lua, 2, "in function table_is_an_array");
  long count = 0;
  long max_key = 0;
  lua_pushnil(lua);
  while (lua_next(lua, index) != 0) {
    lua_pop(lua, 1);
    if (lua_type(lua, -1) != LUA_TNUMBER) {
      lua_pop(lua, 1);
      return false;
    }
    double key = lua_tonumber(lua, -1);
    if (key <= 0 || key > INT_MAX || std::trunc(key) != key) {
      lua_pop(lua, 1);
      return false;
    }
    if (key > max_key) max_key = static_cast<long>(key);
    ++count;
  }
  return max_key == count;
}

void encode_value(lua_State* lua, PackBuffer* out, int level);

// Encodes the table on top of the stack (encode_value pops it).
void encode_table(lua_State* lua, PackBuffer* out, int level) {
  int table = lua_gettop(lua);
  if (table_is_array(lua, table)) {
    size_t length = lua_objlen(lua, table);
    encode_container_header(out, length, 0x90, 0xdc, 0xdd);
    luaL_checkstack(lua, 1, "in function mp_encode_lua_table_as_array");
    for (size_t i = 1; i <= length; ++i) {
      lua_pushnumber(lua, static_cast<lua_Number>(i));
      lua_gettable(lua, table);  // honours __index, as lua-cmsgpack does
      encode_value(lua, out, level + 1);
    }
    return;
  }
  luaL_checkstack(lua, 3, "in function mp_encode_lua_table_as_map");
  uint64_t count = 0;
  lua_pushnil(lua);
  while (lua_next(lua, table) != 0) {
    lua_pop(lua, 1);
    ++count;
  }
  encode_container_header(out, count, 0x80, 0xde, 0xdf);
  lua_pushnil(lua);
  while (lua_next(lua, table) != 0) {
    lua_pushvalue(lua, -2);
    encode_value(lua, out, level + 1);  // the key copy
    encode_value(lua, out, level + 1);  // the value
  }
}

// Encodes the value on top of the stack and pops it.
void encode_value(lua_State* lua, PackBuffer* out, int level) {
  int type = lua_type(lua, -1);
  if (type == LUA_TTABLE && level == kMaxNesting) type = LUA_TNIL;
  switch (type) {
    case LUA_TSTRING: {
      size_t length;
      const char* s = lua_tolstring(lua, -1, &length);
      encode_string(out, s, length);
      break;
    }
    case LUA_TBOOLEAN:
      put_tagged(out, lua_toboolean(lua, -1) ? 0xc3 : 0xc2, 0, 0);
      break;
    case LUA_TNUMBER:
      encode_number(out, lua_tonumber(lua, -1));
      break;
    case LUA_TTABLE:
      encode_table(lua, out, level);
      break;
    default:
      put_tagged(out, 0xc0, 0, 0);
  }
  lua_pop(lua, 1);
}

// ---- decoding -------------------------------------------------------------------------------

enum class DecodeError { kNone, kMissingBytes, kBadFormat };

struct Cursor {
  const unsigned char* p;
  size_t left;
  DecodeError error;
};

uint64_t read_big_endian(const unsigned char* p, int width) {
  uint64_t value = 0;
  for (int i = 0; i < width; ++i) value = (value << 8) | p[i];
  return value;
}

// True when `count` more bytes are available; records a missing-bytes error otherwise.
bool need(Cursor* cursor, size_t count) {
  if (cursor->left >= count) return true;
  cursor->error = DecodeError::kMissingBytes;
  return false;
}

void consume(Cursor* cursor, size_t count) {
  cursor->p += count;
  cursor->left -= count;
}

void decode_value(lua_State* lua, Cursor* cursor);

void decode_array(lua_State* lua, Cursor* cursor, size_t count) {
  lua_newtable(lua);
  luaL_checkstack(lua, 1, "in function mp_decode_to_lua_array");
  for (size_t i = 1; i <= count; ++i) {
    lua_pushnumber(lua, static_cast<lua_Number>(i));
    decode_value(lua, cursor);
    if (cursor->error != DecodeError::kNone) return;
    lua_settable(lua, -3);
  }
}

void decode_map(lua_State* lua, Cursor* cursor, size_t count) {
  lua_newtable(lua);
  for (size_t i = 0; i < count; ++i) {
    decode_value(lua, cursor);
    if (cursor->error != DecodeError::kNone) return;
    decode_value(lua, cursor);
    if (cursor->error != DecodeError::kNone) return;
    // A nil key (0xc0) raises "table index is nil" here, as it does in lua-cmsgpack.
    lua_settable(lua, -3);
  }
}

// Pushes the string whose `header` bytes (tag and length) start at the cursor.
void decode_string(lua_State* lua, Cursor* cursor, int length_width) {
  size_t header = 1 + length_width;
  if (!need(cursor, header)) return;
  size_t length = read_big_endian(cursor->p + 1, length_width);
  consume(cursor, header);
  if (!need(cursor, length)) return;
  lua_pushlstring(lua, reinterpret_cast<const char*>(cursor->p), length);
  consume(cursor, length);
}

// Pushes the container whose count (`count_width` bytes) follows the tag.
void decode_container(lua_State* lua, Cursor* cursor, int count_width, bool is_map) {
  if (!need(cursor, 1 + count_width)) return;
  size_t count = read_big_endian(cursor->p + 1, count_width);
  consume(cursor, 1 + count_width);
  if (is_map) {
    decode_map(lua, cursor, count);
  } else {
    decode_array(lua, cursor, count);
  }
}

// Reads the big-endian number of `width` bytes after the tag and consumes both.
bool read_fixed(Cursor* cursor, int width, uint64_t* value) {
  if (!need(cursor, 1 + width)) return false;
  *value = read_big_endian(cursor->p + 1, width);
  consume(cursor, 1 + width);
  return true;
}

// uint8..uint64. They go through lua_Integer (int64), so a uint64 above INT64_MAX comes out
// negative, as in lua-cmsgpack.
void decode_unsigned(lua_State* lua, Cursor* cursor, int width) {
  uint64_t bits;
  if (read_fixed(cursor, width, &bits)) lua_pushinteger(lua, static_cast<lua_Integer>(bits));
}

// int8..int64: the top bit of the `width` bytes is the sign.
void decode_signed(lua_State* lua, Cursor* cursor, int width) {
  uint64_t bits;
  if (!read_fixed(cursor, width, &bits)) return;
  int shift = 64 - 8 * width;
  auto value = static_cast<int64_t>(bits << shift) >> shift;
  lua_pushnumber(lua, static_cast<lua_Number>(value));
}

// Decodes one value at the cursor and pushes it; on a format error pushes nothing more.
void decode_value(lua_State* lua, Cursor* cursor) {
  if (!need(cursor, 1)) return;
  // Each top-level value stays on the stack until the call returns, so the stack must grow.
  luaL_checkstack(lua, 1, kTooManyValues);
  unsigned char tag = cursor->p[0];
  uint64_t bits;
  switch (tag) {
    case 0xcc: decode_unsigned(lua, cursor, 1); return;
    case 0xcd: decode_unsigned(lua, cursor, 2); return;
    case 0xce: decode_unsigned(lua, cursor, 4); return;
    case 0xcf: decode_unsigned(lua, cursor, 8); return;
    case 0xd0: decode_signed(lua, cursor, 1); return;
    case 0xd1: decode_signed(lua, cursor, 2); return;
    case 0xd2: decode_signed(lua, cursor, 4); return;
    case 0xd3: decode_signed(lua, cursor, 8); return;
    case 0xc0: lua_pushnil(lua); consume(cursor, 1); return;
    case 0xc2: lua_pushboolean(lua, 0); consume(cursor, 1); return;
    case 0xc3: lua_pushboolean(lua, 1); consume(cursor, 1); return;
    case 0xca:
      if (read_fixed(cursor, 4, &bits)) {
        uint32_t narrow = static_cast<uint32_t>(bits);
        float f;
        std::memcpy(&f, &narrow, 4);
        lua_pushnumber(lua, f);
      }
      return;
    case 0xcb:
      if (read_fixed(cursor, 8, &bits)) {
        double d;
        std::memcpy(&d, &bits, 8);
        lua_pushnumber(lua, d);
      }
      return;
    case 0xd9: decode_string(lua, cursor, 1); return;
    case 0xda: decode_string(lua, cursor, 2); return;
    case 0xdb: decode_string(lua, cursor, 4); return;
    case 0xdc: decode_container(lua, cursor, 2, false); return;
    case 0xdd: decode_container(lua, cursor, 4, false); return;
    case 0xde: decode_container(lua, cursor, 2, true); return;
    case 0xdf: decode_container(lua, cursor, 4, true); return;
    default: break;
  }
  if ((tag & 0x80) == 0) {  // positive fixint
    lua_pushinteger(lua, tag);
    consume(cursor, 1);
  } else if ((tag & 0xe0) == 0xe0) {  // negative fixint
    lua_pushinteger(lua, static_cast<int8_t>(tag));
    consume(cursor, 1);
  } else if ((tag & 0xe0) == 0xa0) {  // fixstr
    size_t length = tag & 0x1f;
    if (!need(cursor, 1 + length)) return;
    lua_pushlstring(lua, reinterpret_cast<const char*>(cursor->p + 1), length);
    consume(cursor, 1 + length);
  } else if ((tag & 0xf0) == 0x90) {  // fixarray
    consume(cursor, 1);
    decode_array(lua, cursor, tag & 0x0f);
  } else if ((tag & 0xf0) == 0x80) {  // fixmap
    consume(cursor, 1);
    decode_map(lua, cursor, tag & 0x0f);
  } else {  // 0xc1, bin, ext
    cursor->error = DecodeError::kBadFormat;
  }
}

// Decodes from byte `offset` of argument 1 at most `limit` values (all of them when both are
// 0) and returns them; in limited mode the offset of the next value (-1 at the end) comes
// first. Expects argument 1 to be the only one left on the stack in limited mode.
int unpack_values(lua_State* lua, lua_Integer limit, lua_Integer offset) {
  size_t length;
  const char* data = luaL_checklstring(lua, 1, &length);
  bool decode_all = limit == 0 && offset == 0;
  if (offset < 0 || limit < 0) {
    // lua-cmsgpack prints the input length where it means the limit; kept byte for byte.
    return luaL_error(lua, "Invalid request to unpack with offset of %d and limit of %d.",
                      static_cast<int>(offset), static_cast<int>(length));
  }
  if (static_cast<size_t>(offset) > length) {
    return luaL_error(lua, "Start offset %d greater than input length %d.",
                      static_cast<int>(offset), static_cast<int>(length));
  }
  if (decode_all) limit = INT_MAX;
  Cursor cursor{reinterpret_cast<const unsigned char*>(data) + offset,
                length - static_cast<size_t>(offset), DecodeError::kNone};
  int count = 0;
  for (; cursor.left > 0 && count < limit; ++count) {
    decode_value(lua, &cursor);
    if (cursor.error == DecodeError::kMissingBytes) {
      return luaL_error(lua, "Missing bytes in input.");
    }
    if (cursor.error == DecodeError::kBadFormat) {
      return luaL_error(lua, "Bad data format in input.");
    }
  }
  if (!decode_all) {
    luaL_checkstack(lua, 1, "in function mp_unpack_full");
    lua_Integer next = cursor.left == 0 ? -1 : static_cast<lua_Integer>(length - cursor.left);
    lua_pushinteger(lua, next);
    lua_insert(lua, 2);
    ++count;
  }
  return count;
}

int cmsgpack_pack(lua_State* lua) {
  int argument_count = lua_gettop(lua);
  if (argument_count == 0) return luaL_argerror(lua, 0, "MessagePack pack needs input.");
  if (!lua_checkstack(lua, argument_count)) {
    return luaL_argerror(lua, 0, "Too many arguments for MessagePack pack.");
  }
  PackBuffer out;
  init_buffer(lua, &out);
  // Several arguments pack to the concatenation of their encodings: a stream.
  for (int i = 1; i <= argument_count; ++i) {
    luaL_checkstack(lua, 1, "in function mp_check");
    lua_pushvalue(lua, i);
    encode_value(lua, &out, 0);
  }
  lua_pushlstring(lua, reinterpret_cast<const char*>(out.data), out.size);
  return 1;
}

int cmsgpack_unpack(lua_State* lua) { return unpack_values(lua, 0, 0); }

int cmsgpack_unpack_one(lua_State* lua) {
  lua_Integer offset = luaL_optinteger(lua, 2, 0);
  lua_settop(lua, 1);
  return unpack_values(lua, 1, offset);
}

int cmsgpack_unpack_limit(lua_State* lua) {
  lua_Integer limit = luaL_checkinteger(lua, 2);
  lua_Integer offset = luaL_optinteger(lua, 3, 0);
  lua_settop(lua, 1);
  return unpack_values(lua, limit, offset);
}

const luaL_Reg kCmsgpackFunctions[] = {
    {"pack", cmsgpack_pack},
    {"unpack", cmsgpack_unpack},
    {"unpack_one", cmsgpack_unpack_one},
    {"unpack_limit", cmsgpack_unpack_limit},
    {nullptr, nullptr},
};

}  // namespace

int open_cmsgpack_library(lua_State* lua) {
  lua_newtable(lua);
  for (const luaL_Reg* entry = kCmsgpackFunctions; entry->name != nullptr; ++entry) {
    lua_pushcfunction(lua, entry->func);
    lua_setfield(lua, -2, entry->name);
  }
  // The module's identification fields, which scripts can read, as Redis ships them.
  lua_pushliteral(lua, "cmsgpack");
  lua_setfield(lua, -2, "_NAME");
  lua_pushliteral(lua, "lua-cmsgpack 0.4.0");
  lua_setfield(lua, -2, "_VERSION");
  lua_pushliteral(lua, "Copyright (C) 2012, Salvatore Sanfilippo");
  lua_setfield(lua, -2, "_COPYRIGHT");
  lua_pushliteral(lua, "MessagePack C implementation for Lua");
  lua_setfield(lua, -2, "_DESCRIPTION");
  lua_pushvalue(lua, -1);
  lua_setglobal(lua, "cmsgpack");
  return 1;
}

}  // namespace keywarden
