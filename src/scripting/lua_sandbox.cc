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

// rawset, refusing protected tables as Redis's read-only tables do (raised from C, the error
// carries no position).
int guarded_rawset(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TTABLE);
  lua_getfield(lua, LUA_REGISTRYINDEX, kReadOnlyTables);
  lua_pushvalue(lua, 1);
  lua_rawget(lua, -2);
  if (lua_toboolean(lua, -1)) {
    lua_pushstring(lua, kReadOnlyMessage);
    return lua_error(lua);
  }
  lua_pop(lua, 2);
  luaL_checkany(lua, 2);
  luaL_checkany(lua, 3);
  lua_settop(lua, 3);
  lua_rawset(lua, 1);
  return 1;
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
  lua_remove(lua, real);
  // Remember it as read-only for the guarded rawset.
  lua_getfield(lua, LUA_REGISTRYINDEX, kReadOnlyTables);
  if (lua_isnil(lua, -1)) {
    lua_pop(lua, 1);
    lua_newtable(lua);
    lua_pushvalue(lua, -1);
    lua_setfield(lua, LUA_REGISTRYINDEX, kReadOnlyTables);
  }
  lua_pushvalue(lua, -2);
  lua_pushboolean(lua, 1);
  lua_rawset(lua, -3);
  lua_pop(lua, 1);
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
  lua_pushcfunction(lua, guarded_rawset);
  lua_setglobal(lua, "rawset");

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

}  // namespace keywarden
