// The `struct` library of Redis scripts: struct.pack, struct.unpack and struct.size convert
// between Lua values and binary records described by a format string, with the semantics
// (option letters, alignment, endianness, quirks and error texts) of the struct 0.2 module
// Redis 7.0 embeds. Our own implementation against the Lua 5.1 C API.
//
// Format: '<' little endian, '>' big endian, '![n]' maximum alignment n (default 8),
// 'x' one pad byte, b/B h/H l/L T i[n]/I[n] signed/unsigned integers of 1, 2, 8, 8, n (default
// 4, at most 32) bytes, f float, d double, c[n] n chars (c0: the whole string when packing, the
// previously unpacked number as length when unpacking), s zero-terminated string, ' ' ignored.
//
// Lua errors longjmp: nothing here holds an object with a destructor across a Lua call.
#include <climits>
#include <cstdint>
#include <cstring>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

#include "scripting/lua_libraries.h"

namespace keywarden {
namespace {

constexpr int kMaxIntegerSize = 32;
// The largest alignment '!' accepts without a number: the alignment of a double.
constexpr int kDefaultMaxAlign = 8;

struct FormatState {
  bool little_endian = true;  // native order of the hosts we build for
  int max_align = 1;
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_power_of_two(int x) { return x > 0 && (x & (x - 1)) == 0; }

// Reads the decimal count that may follow an option, advancing `*fmt`; `fallback` when none.
int read_count(lua_State* lua, const char** fmt, int fallback) {
  if (!is_digit(**fmt)) return fallback;
  int value = 0;
  while (is_digit(**fmt)) {
    int digit = **fmt - '0';
    if (value > INT_MAX / 10 || value * 10 > INT_MAX - digit) {
      luaL_error(lua, "integral size overflow");
    }
    value = value * 10 + digit;
    ++*fmt;
  }
  return value;
}

// Bytes an option occupies; 0 for options that are not data of a fixed width.
size_t option_size(lua_State* lua, char option, const char** fmt) {
  switch (option) {
    case 'b': case 'B': case 'x': return 1;
    case 'h': case 'H': return 2;
    case 'l': case 'L': case 'T': case 'd': return 8;
    case 'f': return 4;
    case 'c': return static_cast<size_t>(read_count(lua, fmt, 1));
    case 'i': case 'I': {
      int size = read_count(lua, fmt, 4);
      if (size > kMaxIntegerSize) {
        luaL_error(lua, "integral size %d is larger than limit of %d", size, kMaxIntegerSize);
      }
      return static_cast<size_t>(size);
    }
    default: return 0;
  }
}

// Padding needed before an item of `size` bytes at `offset`. The formula is struct's own,
// including its results for sizes that are not powers of two (i3 under !4).
size_t padding_before(size_t offset, const FormatState& state, char option, size_t size) {
  if (size == 0 || option == 'c') return 0;
  if (size > static_cast<size_t>(state.max_align)) size = state.max_align;
  return (size - (offset & (size - 1))) & (size - 1);
}

// Endianness, alignment and blanks; any other character is an invalid option.
void apply_control_option(lua_State* lua, char option, const char** fmt, FormatState* state) {
  switch (option) {
    case ' ': return;
    case '>': state->little_endian = false; return;
    case '<': state->little_endian = true; return;
    case '!': {
      int align = read_count(lua, fmt, kDefaultMaxAlign);
      if (!is_power_of_two(align)) luaL_error(lua, "alignment %d is not a power of 2", align);
      state->max_align = align;
      return;
    }
    default: {
      const char* message = lua_pushfstring(lua, "invalid format option '%c'", option);
      luaL_argerror(lua, 1, message);
    }
  }
}

// Conversions of out-of-range doubles follow what the x86-64 instructions struct's C casts
// compile to (cvttsd2si yields INT64_MIN), so packing huge numbers gives Redis's bytes.
int64_t double_to_int64(double n) {
  if (!(n >= -9223372036854775808.0 && n < 9223372036854775808.0)) return INT64_MIN;
  return static_cast<int64_t>(n);
}

uint64_t double_to_uint64(double n) {
  if (n < 9223372036854775808.0) return static_cast<uint64_t>(double_to_int64(n));
  double reduced = n - 9223372036854775808.0;
  return static_cast<uint64_t>(double_to_int64(reduced)) ^ (uint64_t{1} << 63);
}

void pack_integer(lua_State* lua, luaL_Buffer* buffer, int arg, bool little_endian, int size) {
  double n = luaL_checknumber(lua, arg);
  uint64_t value = n < 0 ? static_cast<uint64_t>(double_to_int64(n)) : double_to_uint64(n);
  unsigned char bytes[kMaxIntegerSize];
  // Bytes past the eighth are zero, even for negative numbers, as in struct.
  for (int i = 0; i < size; ++i) {
    unsigned char byte = i < 8 ? static_cast<unsigned char>(value >> (8 * i)) : 0;
    bytes[little_endian ? i : size - 1 - i] = byte;
  }
  luaL_addlstring(buffer, reinterpret_cast<const char*>(bytes), size);
}

double unpack_integer(const char* data, bool little_endian, bool is_signed, int size) {
  uint64_t value = 0;
  for (int i = 0; i < size; ++i) {
    int index = little_endian ? size - 1 - i : i;
    value = (value << 8) | static_cast<unsigned char>(data[index]);
  }
  if (!is_signed) return static_cast<double>(value);
  // struct shifts by size*8-1 without a range check; the hardware takes the count mod 64.
  uint64_t sign_mask = ~uint64_t{0} << ((size * 8 - 1) & 63);
  if (value & sign_mask) value |= sign_mask;
  return static_cast<double>(static_cast<int64_t>(value));
}

// Reverses `bytes` in place when the requested order is not the host's (little endian).
void to_order(unsigned char* bytes, size_t size, bool little_endian) {
  if (little_endian) return;
  for (size_t i = 0, j = size - 1; i < j; ++i, --j) {
    unsigned char t = bytes[i];
    bytes[i] = bytes[j];
    bytes[j] = t;
  }
}

int struct_pack(lua_State* lua) {
  const char* fmt = luaL_checkstring(lua, 1);
  FormatState state;
  int arg = 2;
  size_t total = 0;
  lua_pushnil(lua);  // keeps the arguments apart from the buffer's stack slots
  luaL_Buffer buffer;
  luaL_buffinit(lua, &buffer);
  while (*fmt != '\0') {
    char option = *fmt++;
    size_t size = option_size(lua, option, &fmt);
    size_t padding = padding_before(total, state, option, size);
    total += padding;
    for (; padding > 0; --padding) luaL_addchar(&buffer, '\0');
    switch (option) {
      case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i':
      case 'I':
        pack_integer(lua, &buffer, arg++, state.little_endian, static_cast<int>(size));
        break;
      case 'x':
        luaL_addchar(&buffer, '\0');
        break;
      case 'f': {
        float f = static_cast<float>(luaL_checknumber(lua, arg++));
        unsigned char bytes[4];
        std::memcpy(bytes, &f, 4);
        to_order(bytes, 4, state.little_endian);
        luaL_addlstring(&buffer, reinterpret_cast<const char*>(bytes), 4);
        break;
      }
      case 'd': {
        double d = luaL_checknumber(lua, arg++);
        unsigned char bytes[8];
        std::memcpy(bytes, &d, 8);
        to_order(bytes, 8, state.little_endian);
        luaL_addlstring(&buffer, reinterpret_cast<const char*>(bytes), 8);
        break;
      }
      case 'c': case 's': {
        size_t length;
        const char* s = luaL_checklstring(lua, arg++, &length);
        if (size == 0) size = length;
        // struct reports the argument after the string; kept for identical messages.
        luaL_argcheck(lua, length >= size, arg, "string too short");
        luaL_addlstring(&buffer, s, size);
        if (option == 's') {
          luaL_addchar(&buffer, '\0');
          ++size;
        }
        break;
      }
      default:
        apply_control_option(lua, option, &fmt, &state);
    }
    total += size;
  }
  luaL_pushresult(&buffer);
  return 1;
}

int struct_unpack(lua_State* lua) {
  const char* fmt = luaL_checkstring(lua, 1);
  size_t data_length;
  const char* data = luaL_checklstring(lua, 2, &data_length);
  // Checked unsigned, as Redis does: 0 is refused, a negative offset wraps to a huge one.
  size_t pos = static_cast<size_t>(luaL_optinteger(lua, 3, 1));
  luaL_argcheck(lua, pos > 0, 3, "offset must be 1 or greater");
  --pos;
  FormatState state;
  lua_settop(lua, 2);
  while (*fmt != '\0') {
    char option = *fmt++;
    size_t size = option_size(lua, option, &fmt);
    pos += padding_before(pos, state, option, size);
    luaL_argcheck(lua, size <= data_length && pos <= data_length - size, 2,
                  "data string too short");
    luaL_checkstack(lua, 1, "too many results");
    switch (option) {
      case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i':
      case 'I': {
        bool is_signed = option >= 'a' && option <= 'z';
        lua_pushnumber(lua, unpack_integer(data + pos, state.little_endian, is_signed,
                                           static_cast<int>(size)));
        break;
      }
      case 'x':
        break;
      case 'f': {
        unsigned char bytes[4];
        std::memcpy(bytes, data + pos, 4);
        to_order(bytes, 4, state.little_endian);
        float f;
        std::memcpy(&f, bytes, 4);
        lua_pushnumber(lua, f);
        break;
      }
      case 'd': {
        unsigned char bytes[8];
        std::memcpy(bytes, data + pos, 8);
        to_order(bytes, 8, state.little_endian);
        double d;
        std::memcpy(&d, bytes, 8);
        lua_pushnumber(lua, d);
        break;
      }
      case 'c': {
        if (size == 0) {
          // The length is the last unpacked value (a numeric string counts), which is
          // consumed: it is replaced by the chars it measured.
          if (lua_gettop(lua) <= 2 || !lua_isnumber(lua, -1)) {
            luaL_error(lua, "format 'c0' needs a previous size");
          }
          // Anything negative, huge or NaN is "too short" below (a cast would be undefined).
          const double wanted = lua_tonumber(lua, -1);
          size = wanted >= 0 && wanted <= static_cast<double>(data_length)
                     ? static_cast<size_t>(wanted)
                     : SIZE_MAX;
          lua_pop(lua, 1);
          luaL_argcheck(lua, size <= data_length && pos <= data_length - size, 2,
                        "data string too short");
        }
        lua_pushlstring(lua, data + pos, size);
        break;
      }
      case 's': {
        const void* end = std::memchr(data + pos, '\0', data_length - pos);
        if (end == nullptr) luaL_error(lua, "unfinished string in data");
        size = static_cast<size_t>(static_cast<const char*>(end) - (data + pos)) + 1;
        lua_pushlstring(lua, data + pos, size - 1);
        break;
      }
      default:
        apply_control_option(lua, option, &fmt, &state);
    }
    pos += size;
  }
  lua_pushinteger(lua, static_cast<lua_Integer>(pos + 1));
  return lua_gettop(lua) - 2;
}

int struct_size(lua_State* lua) {
  const char* fmt = luaL_checkstring(lua, 1);
  FormatState state;
  size_t pos = 0;
  while (*fmt != '\0') {
    char option = *fmt++;
    size_t size = option_size(lua, option, &fmt);
    pos += padding_before(pos, state, option, size);
    if (option == 's') {
      luaL_argerror(lua, 1, "option 's' has no fixed size");
    } else if (option == 'c' && size == 0) {
      luaL_argerror(lua, 1, "option 'c0' has no fixed size");
    }
    // Unknown letters and digits count as zero-sized here, where pack and unpack reject them.
    bool alphanumeric = is_digit(option) || (option >= 'a' && option <= 'z') ||
                        (option >= 'A' && option <= 'Z');
    if (!alphanumeric) apply_control_option(lua, option, &fmt, &state);
    pos += size;
  }
  lua_pushinteger(lua, static_cast<lua_Integer>(pos));
  return 1;
}

const luaL_Reg kStructFunctions[] = {
    {"pack", struct_pack},
    {"unpack", struct_unpack},
    {"size", struct_size},
    {nullptr, nullptr},
};

}  // namespace

int open_struct_library(lua_State* lua) {
  luaL_register(lua, "struct", kStructFunctions);
  return 1;
}

}  // namespace keywarden
