// Opens the script libraries into a Lua state in Redis 7.0's order (see lua_libraries.h), and
// guards Debian's cjson.encode against the buffer overflow Redis fixed in its own copy.
#include "scripting/lua_libraries.h"

#include <cmath>
#include <cstddef>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <lua-bitop.h>
#include <lua-cjson.h>
}

namespace keywarden {
namespace {

// luaopen_* functions of Lua 5.1 expect to be called from Lua, with the module name as their
// argument (luaL_register reads the stack), so they run through lua_call rather than directly.
void load_library(lua_State* lua, const char* name, lua_CFunction open) {
  lua_pushcfunction(lua, open);
  lua_pushstring(lua, name);
  lua_call(lua, 1, 0);
}

// ---- cjson.encode guard ---------------------------------------------------------------------
//
// lua-cjson 2.1.0 keeps its output buffer sizes in `int` and, before escaping a string,
// reserves 6 bytes per input byte beyond what it has written. A string of ~358 MB (well under
// proto-max-bulk-len) wraps that reservation and the encoder writes past its buffer
// (CVE-2022-24834, fixed in Redis 7.0.12's copy, not in Debian's 2.1.0+dfsg); once the buffer
// passes 1 GB its doubling overflows as well. So before calling the real encoder we bound its
// output from above (escaped lengths, number reservations) and refuse a value whose output
// plus any single reservation could pass 1 GB. Redis would encode such a value, given the
// memory; no real script comes near it.

constexpr size_t kMaxEncodedBytes = size_t{1} << 30;
constexpr size_t kNumberReserve = 32;  // cjson reserves this much for every number it prints
constexpr int kMaxScanDepth = 10000;   // cjson's stack checks refuse far shallower nesting
constexpr char kTooLarge[] = "Cannot serialise, encoded JSON could exceed 1073741824 bytes";

struct EncodeBound {
  size_t bytes = 0;  // upper bound of the output written so far
  bool exceeded = false;
  // The module's settings: tables deeper than encode_max_depth make cjson fail anyway, and
  // encode_sparse_array decides which tables become arrays padded with nulls.
  int max_depth = 1000;
  int sparse_ratio = 2;
  int sparse_safe = 10;

  // Accounts `written` bytes of output after a transient reservation of `reserved` bytes.
  void add(size_t written, size_t reserved) {
    if (reserved > kMaxEncodedBytes - bytes || written > kMaxEncodedBytes - bytes) {
      exceeded = true;
      return;
    }
    bytes += written;
  }
  void add(size_t written) { add(written, written); }
};

// The length cjson's escaping gives `s`, quotes included: control characters and DEL become
// \uXXXX (or two-character forms), quote, backslash and slash gain a backslash.
size_t escaped_length(const char* s, size_t length) {
  size_t out = length + 2;
  for (size_t i = 0; i < length; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\' || c == '/' || c == '\b' || c == '\f' || c == '\n' ||
        c == '\r' || c == '\t') {
      out += 1;
    } else if (c < 0x20 || c == 0x7f) {
      out += 5;
    }
  }
  return out;
}

void bound_string(lua_State* lua, int index, EncodeBound* bound) {
  size_t length;
  const char* s = lua_tolstring(lua, index, &length);
  // The reservation is checked first: it is cheaper than counting escapes.
  if (length > kMaxEncodedBytes || length * 6 + 2 > kMaxEncodedBytes - bound->bytes) {
    bound->exceeded = true;
    return;
  }
  bound->add(escaped_length(s, length), length * 6 + 2);
}

// Adds the largest output the value at `index` can produce. Stops early once over the limit,
// and at depths where cjson itself will refuse to encode.
void bound_value(lua_State* lua, int index, int depth, EncodeBound* bound) {
  switch (lua_type(lua, index)) {
    case LUA_TSTRING:
      bound_string(lua, index, bound);
      return;
    case LUA_TNUMBER:
      bound->add(kNumberReserve);
      return;
    case LUA_TTABLE:
      break;
    default:
      bound->add(5);  // true, false, null
      return;
  }
  if (depth > bound->max_depth || depth > kMaxScanDepth || !lua_checkstack(lua, 3)) return;
  int table = index < 0 ? lua_gettop(lua) + index + 1 : index;
  size_t entries = 0;
  double max_index = 0;
  bool array_keys = true;  // every key a whole number >= 1, as cjson's array test wants
  bound->add(2);
  lua_pushnil(lua);
  while (lua_next(lua, table) != 0) {
    ++entries;
    int key = lua_gettop(lua) - 1;
    if (lua_type(lua, key) == LUA_TNUMBER) {
      double n = lua_tonumber(lua, key);
      if (!(n >= 1 && std::floor(n) == n)) array_keys = false;
      if (n > max_index) max_index = n;
      bound->add(kNumberReserve + 2);
    } else {
      array_keys = false;
      bound_value(lua, key, depth + 1, bound);
    }
    bound->add(2);  // ':' and ','
    bound_value(lua, -1, depth + 1, bound);
    lua_pop(lua, 1);
    if (bound->exceeded) {
      lua_pop(lua, 1);  // the key the traversal stopped on
      return;
    }
  }
  // A sparse array cjson encodes as an array has its holes printed as nulls; an excessively
  // sparse one becomes an object or an error, both without padding.
  bool excessively_sparse = bound->sparse_ratio > 0 &&
                            max_index > static_cast<double>(entries) * bound->sparse_ratio &&
                            max_index > bound->sparse_safe;
  if (!array_keys || excessively_sparse) return;
  double padding = (max_index - static_cast<double>(entries)) * 5;
  if (padding > static_cast<double>(kMaxEncodedBytes)) {
    bound->exceeded = true;
  } else {
    bound->add(static_cast<size_t>(padding));
  }
}

// cjson.encode(value), upvalues: the real encode, then the module's encode_max_depth and
// encode_sparse_array (called without arguments they report the settings).
int guarded_encode(lua_State* lua) {
  luaL_argcheck(lua, lua_gettop(lua) == 1, 1, "expected 1 argument");
  EncodeBound bound;
  lua_pushvalue(lua, lua_upvalueindex(2));
  lua_call(lua, 0, 1);
  bound.max_depth = static_cast<int>(lua_tointeger(lua, -1));
  lua_pushvalue(lua, lua_upvalueindex(3));
  lua_call(lua, 0, 3);  // convert, ratio, safe
  bound.sparse_ratio = static_cast<int>(lua_tointeger(lua, -2));
  bound.sparse_safe = static_cast<int>(lua_tointeger(lua, -1));
  lua_settop(lua, 1);
  bound_value(lua, 1, 1, &bound);
  if (bound.exceeded) return luaL_error(lua, "%s", kTooLarge);
  lua_pushvalue(lua, lua_upvalueindex(1));
  lua_insert(lua, 1);
  int status = lua_pcall(lua, 1, 1, 0);
  if (status == 0) return 1;
  // cjson's errors carry no position when it is called from C; add the script's, as it gets
  // when a script calls cjson's encode directly.
  if (status == LUA_ERRRUN && lua_type(lua, -1) == LUA_TSTRING) {
    luaL_where(lua, 1);
    lua_insert(lua, -2);
    lua_concat(lua, 2);
  }
  return lua_error(lua);
}

void guard_cjson_module(lua_State* lua, int module);

// cjson.new(): a fresh module with its own settings, guarded the same way.
int guarded_new(lua_State* lua) {
  lua_pushvalue(lua, lua_upvalueindex(1));
  lua_call(lua, 0, 1);
  guard_cjson_module(lua, lua_gettop(lua));
  return 1;
}

void guard_cjson_module(lua_State* lua, int module) {
  lua_getfield(lua, module, "encode");
  lua_getfield(lua, module, "encode_max_depth");
  lua_getfield(lua, module, "encode_sparse_array");
  lua_pushcclosure(lua, guarded_encode, 3);
  lua_setfield(lua, module, "encode");
  lua_getfield(lua, module, "new");
  lua_pushcclosure(lua, guarded_new, 1);
  lua_setfield(lua, module, "new");
}

// Debian builds lua-cjson without ENABLE_CJSON_GLOBAL, so its luaopen_cjson only returns the
// module; Redis's copy also sets the `cjson` global, which scripts rely on.
int open_cjson_as_global(lua_State* lua) {
  lua_settop(lua, 0);
  lua_pushcfunction(lua, luaopen_cjson);
  lua_call(lua, 0, 1);
  guard_cjson_module(lua, 1);
  lua_pushvalue(lua, 1);
  lua_setglobal(lua, "cjson");
  return 1;
}

}  // namespace

void open_script_libraries(lua_State* lua) {
  load_library(lua, "", luaopen_base);
  load_library(lua, LUA_TABLIBNAME, luaopen_table);
  load_library(lua, LUA_STRLIBNAME, luaopen_string);
  load_library(lua, LUA_MATHLIBNAME, luaopen_math);
  load_library(lua, LUA_DBLIBNAME, luaopen_debug);
  load_library(lua, "cjson", open_cjson_as_global);
  load_library(lua, "struct", open_struct_library);
  load_library(lua, "cmsgpack", open_cmsgpack_library);
  load_library(lua, "bit", luaopen_bit);
}

}  // namespace keywarden
