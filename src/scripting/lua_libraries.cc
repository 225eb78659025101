// Opens the script libraries into a Lua state in Redis 7.0's order (see lua_libraries.h).
#include "scripting/lua_libraries.h"

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

// Debian builds lua-cjson without ENABLE_CJSON_GLOBAL, so its luaopen_cjson only returns the
// module; Redis's copy also sets the `cjson` global, which scripts rely on.
int open_cjson_as_global(lua_State* lua) {
  lua_settop(lua, 0);
  lua_pushcfunction(lua, luaopen_cjson);
  lua_call(lua, 0, 1);
  lua_pushvalue(lua, -1);
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
