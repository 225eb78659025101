// The Lua libraries a script sees, opened the way Redis 7.0 opens them (luaLoadLibraries in
// script_lua.c): base (with coroutine), table, string, math and debug from Lua 5.1 itself,
// then cjson and bit from Debian's packages and struct and cmsgpack written here, each also set
// as a global of its own name. io, os and package are never opened.
//
// Opening is only the first step: the engine's sandbox then removes what redis-server 7.0.15
// does not show scripts (print, loadfile, dofile, getfenv, setfenv, newproxy, and debug once
// the error handler is built), replaces math.random/randomseed and protects the globals.
//
// cjson.encode (and that of cjson.new() modules) is wrapped to refuse values whose JSON could
// pass 1 GB: Debian's lua-cjson 2.1.0 overflows its buffer on them (CVE-2022-24834).
#pragma once

struct lua_State;

namespace keywarden {

// Opens every library above into `lua`. Call it once on a fresh state, outside any script.
void open_script_libraries(lua_State* lua);

// The Lua-facing entry points of our own modules, shaped like luaopen_* functions: each
// registers its table as a global (struct / cmsgpack) and leaves it on the stack.
int open_struct_library(lua_State* lua);
int open_cmsgpack_library(lua_State* lua);

}  // namespace keywarden
