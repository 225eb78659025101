#include "scripting/lua_sandbox.h"

#include <cmath>
#include <cstdint>
#include <string>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
}

#include "scripting/lua_libraries.h"

namespace keywarden {
namespace {

// Registry keys.
constexpr const char* kRealGlobals = "__keywarden_globals";
constexpr const char* kProxyGlobals = "__keywarden_proxy";
constexpr const char* kReadOnlyTables = "__keywarden_readonly";
constexpr const char* kLoadGlobals = "__keywarden_load_globals";
constexpr const char* kStringMetaView = "__keywarden_string_meta";

constexpr const char* kReadOnlyMessage = "Attempt to modify a readonly table";

// math.random and math.randomseed as Redis replaces them: a 48-bit linear congruential
// generator (the lrand48 recurrence) with a fixed initial state, shared by every script of the
// process, so that a fresh server gives every script run the same sequence Redis would.
constexpr uint64_t kRandomMultiplier = 0x5DEECE66DULL;
constexpr uint64_t kRandomIncrement = 0xB;
constexpr uint64_t kRandomMask = (1ULL << 48) - 1;
constexpr uint64_t kRandomInitialState = 0x1234ABCD330EULL;
constexpr int32_t kRandomMax = INT32_MAX;
uint64_t random_state = kRandomInitialState;

int32_t next_random() {
  random_state = (kRandomMultiplier * random_state + kRandomIncrement) & kRandomMask;
  return static_cast<int32_t>(random_state >> 17);
}

int math_random(lua_State* lua) {
  const lua_Number r = static_cast<lua_Number>(next_random() % kRandomMax) / kRandomMax;
  switch (lua_gettop(lua)) {
    case 0:
      lua_pushnumber(lua, r);
      return 1;
    case 1: {
      const int upper = luaL_checkint(lua, 1);
      luaL_argcheck(lua, 1 <= upper, 1, "interval is empty");
      lua_pushnumber(lua, std::floor(r * upper) + 1);
      return 1;
    }
    case 2: {
      const int lower = luaL_checkint(lua, 1);
      const int upper = luaL_checkint(lua, 2);
      luaL_argcheck(lua, lower <= upper, 2, "interval is empty");
      lua_pushnumber(lua, std::floor(r * (upper - lower + 1)) + lower);
      return 1;
    }
    default:
      return luaL_error(lua, "wrong number of arguments");
  }
}

int math_randomseed(lua_State* lua) {
  const auto seed = static_cast<uint32_t>(luaL_checkint(lua, 1));
  random_state = (uint64_t{seed >> 16} << 32) | (uint64_t{seed & 0xffff} << 16) | 0x330E;
  return 0;
}

// pcall as Redis 7 redefines it: an error raised as a table with a string `err` field (what
// redis.call raises) comes back as that string, as scripts written for Redis 6 expect.
int protected_call(lua_State* lua) {
  luaL_checkany(lua, 1);
  const int argc = lua_gettop(lua);
  lua_pushboolean(lua, 1);
  lua_insert(lua, 1);
  if (lua_pcall(lua, argc - 1, LUA_MULTRET, 0) != 0) {
    lua_remove(lua, 1);
    if (lua_istable(lua, -1)) {
      lua_getfield(lua, -1, "err");
      if (lua_isstring(lua, -1)) {
        lua_replace(lua, -2);
      } else {
        lua_pop(lua, 1);
      }
    }
    lua_pushboolean(lua, 0);
    lua_insert(lua, 1);
  }
  return lua_gettop(lua);
}

// __index of a strict proxy: reading a name nobody defined is an error.
int read_strict(lua_State* lua, int source) {
  lua_pushvalue(lua, 2);
  lua_rawget(lua, source);
  if (lua_isnil(lua, -1)) {
    const char* name = lua_tostring(lua, 2);
    return luaL_error(lua, "Script attempted to access nonexistent global variable '%s'",
                      name != nullptr ? name : "?");
  }
  return 1;
}

int read_field(lua_State* lua) { return read_strict(lua, lua_upvalueindex(1)); }

// __index of the globals proxy: while a function library loads, its code sees only the
// load-time API.
int read_global(lua_State* lua) {
  lua_getfield(lua, LUA_REGISTRYINDEX, kLoadGlobals);
  return read_strict(lua, lua_istable(lua, -1) ? lua_gettop(lua) : lua_upvalueindex(1));
}

// __newindex of every protected table.
int refuse_write(lua_State* lua) { return luaL_error(lua, kReadOnlyMessage); }

// Pushes the real table behind the proxy at `index`, or nil when it is not a proxy. Every
// read-only proxy is remembered in the registry as proxy -> real table.
void push_proxy_target(lua_State* lua, int index) {
  index = index < 0 ? lua_gettop(lua) + 1 + index : index;
  lua_getfield(lua, LUA_REGISTRYINDEX, kReadOnlyTables);
  if (lua_isnil(lua, -1)) return;
  lua_pushvalue(lua, index);
  lua_rawget(lua, -2);
  lua_remove(lua, -2);
}

bool is_protected(lua_State* lua, int index) {
  push_proxy_target(lua, index);
  const bool found = !lua_isnil(lua, -1);
  lua_pop(lua, 1);
  return found;
}

int raise_read_only(lua_State* lua) {
  // Raised from C, the error carries no position, as Redis's read-only tables report it.
  lua_pushstring(lua, kReadOnlyMessage);
  return lua_error(lua);
}

// rawset, refusing protected tables.
int guarded_rawset(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TTABLE);
  if (is_protected(lua, 1)) return raise_read_only(lua);
  luaL_checkany(lua, 2);
  luaL_checkany(lua, 3);
  lua_settop(lua, 3);
  lua_rawset(lua, 1);
  return 1;
}

// setmetatable, refusing protected tables (their metatable is what protects them).
int guarded_setmetatable(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TTABLE);
  const int type = lua_type(lua, 2);
  luaL_argcheck(lua, type == LUA_TNIL || type == LUA_TTABLE, 2, "nil or table expected");
  if (is_protected(lua, 1)) return raise_read_only(lua);
  if (luaL_getmetafield(lua, 1, "__metatable")) {
    return luaL_error(lua, "cannot change a protected metatable");
  }
  lua_settop(lua, 2);
  lua_setmetatable(lua, 1);
  return 1;
}

// getmetatable: a string's metatable is seen through a read-only view, so that no script can
// change how every other script's strings behave.
int guarded_getmetatable(lua_State* lua) {
  luaL_checkany(lua, 1);
  if (lua_type(lua, 1) == LUA_TSTRING) {
    lua_getfield(lua, LUA_REGISTRYINDEX, kStringMetaView);
    return 1;
  }
  if (!lua_getmetatable(lua, 1)) {
    lua_pushnil(lua);
    return 1;
  }
  luaL_getmetafield(lua, 1, "__metatable");
  return 1;
}

// rawget, next and pairs read a proxy's real table, so that iterating the globals or a
// library shows what Redis shows (its tables are read-only in place, not proxied).
void replace_proxy_argument(lua_State* lua) {
  push_proxy_target(lua, 1);
  if (lua_isnil(lua, -1)) {
    lua_pop(lua, 1);
  } else {
    lua_replace(lua, 1);
  }
}

int proxied_rawget(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TTABLE);
  luaL_checkany(lua, 2);
  lua_settop(lua, 2);
  replace_proxy_argument(lua);
  lua_rawget(lua, 1);
  return 1;
}

int proxied_next(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TTABLE);
  lua_settop(lua, 2);
  replace_proxy_argument(lua);
  if (lua_next(lua, 1)) return 2;
  lua_pushnil(lua);
  return 1;
}

int proxied_pairs(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TTABLE);
  lua_pushcfunction(lua, proxied_next);
  lua_pushvalue(lua, 1);
  lua_pushnil(lua);
  return 3;
}

// loadstring and load as Redis's Lua has them: precompiled bytecode is never loaded (in Lua
// 5.1 a crafted binary chunk reads and writes arbitrary memory). Redis's Lua always runs the
// text parser, which fails on a binary chunk's first byte; the same parser error comes from
// feeding the parser one space before the chunk, which keeps the line numbers. The loaded
// function gets the scripts' protected globals, not the real table underneath.
struct ChunkReader {
  const char* text;     // loadstring's string, or null for load's reader function
  size_t length;
  int stage = 0;        // 0: the leading space; 1: the chunk; 2: done (string form)
};

const char* read_chunk(lua_State* lua, void* data, size_t* size) {
  auto* reader = static_cast<ChunkReader*>(data);
  if (reader->stage == 0) {
    reader->stage = 1;
    *size = 1;
    return " ";
  }
  if (reader->text != nullptr) {
    if (reader->stage == 2) return nullptr;
    reader->stage = 2;
    *size = reader->length;
    return reader->text;
  }
  // load(f): f is at index 1 and returns the chunk piece by piece (nil or "" ends it).
  luaL_checkstack(lua, 2, "too many nested functions");
  lua_pushvalue(lua, 1);
  lua_call(lua, 0, 1);
  if (lua_isnil(lua, -1)) {
    *size = 0;
    return nullptr;
  }
  if (!lua_isstring(lua, -1)) luaL_error(lua, "reader function must return a string");
  lua_replace(lua, 3);  // kept alive in a reserved slot while the parser reads it
  return lua_tolstring(lua, 3, size);
}

int finish_load(lua_State* lua, int status) {
  if (status != 0) {
    lua_pushnil(lua);
    lua_insert(lua, -2);
    return 2;  // nil, message
  }
  set_script_environment(lua, -1);
  return 1;
}

int safe_loadstring(lua_State* lua) {
  size_t length;
  const char* text = luaL_checklstring(lua, 1, &length);
  const char* name = luaL_optstring(lua, 2, text);
  ChunkReader reader{text, length};
  return finish_load(lua, lua_load(lua, read_chunk, &reader, name));
}

int safe_load(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TFUNCTION);
  const char* name = luaL_optstring(lua, 2, "=(load)");
  lua_settop(lua, 3);  // slot 3 holds the piece being parsed
  ChunkReader reader{nullptr, 0};
  return finish_load(lua, lua_load(lua, read_chunk, &reader, name));
}

enum class ProxyKind { kPlain, kStrict, kGlobals };

// Replaces the table at the top of the stack by a read-only proxy of it; strict proxies also
// refuse reads of missing names.
void push_proxy(lua_State* lua, ProxyKind kind) {
  const int real = lua_gettop(lua);
  lua_newtable(lua);                  // the proxy
  lua_createtable(lua, 0, 3);         // its metatable
  lua_pushvalue(lua, real);
  if (kind != ProxyKind::kPlain) {
    lua_pushcclosure(lua, kind == ProxyKind::kGlobals ? read_global : read_field, 1);
  }
  lua_setfield(lua, -2, "__index");
  lua_pushcfunction(lua, refuse_write);
  lua_setfield(lua, -2, "__newindex");
  lua_newtable(lua);
  lua_setfield(lua, -2, "__metatable");  // getmetatable sees a stand-in, not the real one
  lua_setmetatable(lua, -2);
  // Remember it as proxy -> real table (read-only for rawset and setmetatable, read through
  // by rawget, next and pairs).
  lua_getfield(lua, LUA_REGISTRYINDEX, kReadOnlyTables);
  if (lua_isnil(lua, -1)) {
    lua_pop(lua, 1);
    lua_newtable(lua);
    lua_pushvalue(lua, -1);
    lua_setfield(lua, LUA_REGISTRYINDEX, kReadOnlyTables);
  }
  lua_pushvalue(lua, -2);
  lua_pushvalue(lua, real);
  lua_rawset(lua, -3);
  lua_pop(lua, 1);
  lua_remove(lua, real);
}

}  // namespace

void open_sandboxed_libraries(lua_State* lua) {
  open_script_libraries(lua);
  static const char* const kRemoved[] = {"print",   "dofile",  "loadfile", "require",
                                         "module",  "setfenv", "getfenv",  "newproxy",
                                         "package", "os",      "io"};
  for (const char* name : kRemoved) {
    lua_pushnil(lua);
    lua_setglobal(lua, name);
  }
  lua_pushcfunction(lua, protected_call);
  lua_setglobal(lua, "pcall");
  lua_getglobal(lua, "math");
  lua_pushcfunction(lua, math_random);
  lua_setfield(lua, -2, "random");
  lua_pushcfunction(lua, math_randomseed);
  lua_setfield(lua, -2, "randomseed");
  lua_pop(lua, 1);
}

void install_error_handler(lua_State* lua, const char* name) {
  // Every error leaves a script as {err = "<CODE> <message>", source = …, line = …}: the
  // position is that of the script code that failed, skipping a C function (redis.call) in
  // between. Plain error values get the generic ERR code. `debug` is captured here and then
  // removed from the globals, as Redis does.
  static const char* const kHandler =
      "local getinfo = debug.getinfo\n"
      "return function(failure)\n"
      "  local where = getinfo(2, 'Sl')\n"
      "  if where and where.what == 'C' then where = getinfo(3, 'Sl') end\n"
      "  if type(failure) ~= 'table' then\n"
      "    failure = {err = 'ERR ' .. tostring(failure)}\n"
      "  end\n"
      "  if where then\n"
      "    failure.source = where.source\n"
      "    failure.line = where.currentline\n"
      "  end\n"
      "  return failure\n"
      "end\n";
  luaL_loadbuffer(lua, kHandler, std::char_traits<char>::length(kHandler), "@err_handler_def");
  lua_call(lua, 0, 1);
  lua_setglobal(lua, name);
  lua_pushnil(lua);
  lua_setglobal(lua, "debug");
}

void protect_globals(lua_State* lua) {
  // Library tables become read-only proxies in the real globals.
  static const char* const kLibraries[] = {"string", "table",    "math",      "coroutine",
                                           "cjson",  "bit",      "struct",    "cmsgpack",
                                           "redis"};
  for (const char* name : kLibraries) {
    lua_getglobal(lua, name);
    if (!lua_istable(lua, -1)) {
      lua_pop(lua, 1);
      continue;
    }
    push_proxy(lua, ProxyKind::kPlain);
    lua_setglobal(lua, name);
  }
  // Strings index the read-only string library, and scripts see their metatable read-only.
  lua_pushliteral(lua, "");
  lua_getmetatable(lua, -1);
  lua_getglobal(lua, "string");
  lua_setfield(lua, -2, "__index");
  push_proxy(lua, ProxyKind::kPlain);
  lua_setfield(lua, LUA_REGISTRYINDEX, kStringMetaView);
  lua_pop(lua, 1);

  static const luaL_Reg kGuarded[] = {
      {"rawset", guarded_rawset},           {"setmetatable", guarded_setmetatable},
      {"getmetatable", guarded_getmetatable}, {"rawget", proxied_rawget},
      {"next", proxied_next},               {"pairs", proxied_pairs},
      {"loadstring", safe_loadstring},      {"load", safe_load},
  };
  for (const luaL_Reg& entry : kGuarded) {
    lua_pushcfunction(lua, entry.func);
    lua_setglobal(lua, entry.name);
  }

  // The globals proxy; _G names it, so `_G.x = 1` is refused like `x = 1`.
  lua_pushvalue(lua, LUA_GLOBALSINDEX);
  lua_pushvalue(lua, -1);
  lua_setfield(lua, LUA_REGISTRYINDEX, kRealGlobals);
  push_proxy(lua, ProxyKind::kGlobals);
  lua_pushvalue(lua, -1);
  lua_setfield(lua, LUA_REGISTRYINDEX, kProxyGlobals);
  lua_setglobal(lua, "_G");
}

void set_script_environment(lua_State* lua, int index) {
  const int function = lua_gettop(lua) + 1 + index;  // index is relative (negative)
  lua_getfield(lua, LUA_REGISTRYINDEX, kProxyGlobals);
  lua_setfenv(lua, function);
}

void make_read_only(lua_State* lua, bool strict) {
  push_proxy(lua, strict ? ProxyKind::kStrict : ProxyKind::kPlain);
}

void set_load_globals(lua_State* lua, int index) {
  if (index == 0) {
    lua_pushnil(lua);
  } else {
    lua_pushvalue(lua, index);
  }
  lua_setfield(lua, LUA_REGISTRYINDEX, kLoadGlobals);
}

void set_global_array(lua_State* lua, const char* name, std::span<const std::string_view> values) {
  lua_createtable(lua, static_cast<int>(values.size()), 0);
  for (size_t i = 0; i < values.size(); ++i) {
    lua_pushlstring(lua, values[i].data(), values[i].size());
    lua_rawseti(lua, -2, static_cast<int>(i + 1));
  }
  lua_setglobal(lua, name);  // C code writes the real globals table directly
}

void push_raw_field(lua_State* lua, int index, const char* name) {
  index = index < 0 ? lua_gettop(lua) + 1 + index : index;
  lua_pushstring(lua, name);
  lua_rawget(lua, index);
}

namespace {

struct ProtectedWork {
  void (*work)(lua_State*, void*);
  void* data;
  int results;
};

int run_work(lua_State* lua) {
  const auto* call = static_cast<const ProtectedWork*>(lua_touserdata(lua, lua_upvalueindex(1)));
  call->work(lua, call->data);
  return call->results;
}

}  // namespace

bool run_protected(lua_State* lua, int argc, int results, void (*work)(lua_State*, void*),
                   void* data) {
  ProtectedWork call{work, data, results};
  lua_pushlightuserdata(lua, &call);
  lua_pushcclosure(lua, run_work, 1);
  lua_insert(lua, -(argc + 1));
  if (lua_pcall(lua, argc, results, 0) == 0) return true;
  lua_pop(lua, 1);  // the error
  return false;
}

}  // namespace keywarden
