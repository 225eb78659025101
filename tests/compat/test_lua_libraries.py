"""The Lua libraries scripts see (struct, cmsgpack, cjson, bit and Lua's own string, table,
math) against a stock redis-server: the same EVAL scripts sent to both servers, replies
compared byte for byte.

Every case is a Lua body that returns a value; it runs inside a pcall so that an error comes
back as the text "ERR:<message>" (the message is part of the comparison), and the result goes
through tostring so that numbers compare as Lua prints them, not as Redis truncates them.
Binary results are returned as hex, tables through a deterministic dump (sorted keys).

The same case list feeds tests/unit/scripting/lua_libraries_test.cc, whose expected values
were taken from redis-server 7.0 with these scripts.
"""

from __future__ import annotations

import pytest

from conftest import ReplyError

# Helpers every case can use; one line, so that user_script:N positions match the body's lines.
PRELUDE = (
    "local function hex(s) return (string.gsub(s, '.', function(c) "
    "return string.format('%02x', string.byte(c)) end)) end "
    "local function dump(v) local t = type(v) if t == 'table' then local keys = {} "
    "for k in pairs(v) do keys[#keys + 1] = k end "
    "table.sort(keys, function(a, b) return tostring(a) < tostring(b) end) "
    "local parts = {} for _, k in ipairs(keys) do parts[#parts + 1] = dump(k) .. '=' .. "
    "dump(v[k]) end return '{' .. table.concat(parts, ',') .. '}' "
    "elseif t == 'string' then return string.format('%q', v) else return tostring(v) end end "
    "local function all(...) local n = select('#', ...) local parts = {} "
    "for i = 1, n do parts[i] = dump((select(i, ...))) end "
    "return n .. ':' .. table.concat(parts, ' ') end "
    "local ok, result = pcall(function() "
)
EPILOGUE = (
    " end) if not ok then return 'ERR:' .. tostring(result) end return tostring(result)"
)


def script_for(body: str) -> str:
    return PRELUDE + body + EPILOGUE


CASES: list[tuple[str, str]] = [
    # ---- struct.pack ----
    ("struct_pack_int_le", "return hex(struct.pack('<i', 1))"),
    ("struct_pack_int_be", "return hex(struct.pack('>i', 1))"),
    ("struct_pack_int_native", "return hex(struct.pack('i', -2))"),
    ("struct_pack_bytes", "return hex(struct.pack('bB', -1, 255))"),
    ("struct_pack_byte_wrap", "return hex(struct.pack('b', 300))"),
    ("struct_pack_shorts", "return hex(struct.pack('>hH<hH', -2, 65535, -2, 258))"),
    ("struct_pack_longs", "return hex(struct.pack('>lL', -1, 4294967296))"),
    ("struct_pack_size_t", "return hex(struct.pack('>T', 1))"),
    ("struct_pack_i3", "return hex(struct.pack('>i3<i3', -1, 65536))"),
    ("struct_pack_i16", "return hex(struct.pack('>i16', -1))"),
    ("struct_pack_i16_le", "return hex(struct.pack('<I16', 1))"),
    ("struct_pack_i0", "return hex(struct.pack('i0', 5))"),
    ("struct_pack_float", "return hex(struct.pack('>f<f', 1.5, -0.25))"),
    ("struct_pack_double", "return hex(struct.pack('>d<d', 1.1, 1/0))"),
    ("struct_pack_chars", "return hex(struct.pack('c3', 'abcdef'))"),
    ("struct_pack_c0", "return hex(struct.pack('c0', 'abcdef'))"),
    ("struct_pack_c_default", "return hex(struct.pack('c', 'xyz'))"),
    ("struct_pack_zstring", "return hex(struct.pack('s', 'hi'))"),
    ("struct_pack_padding", "return hex(struct.pack('bxxb', 1, 2))"),
    ("struct_pack_align", "return hex(struct.pack('!4 b i b d', 1, 2, 3, 4))"),
    ("struct_pack_align_default", "return hex(struct.pack('! b d', 1, 2))"),
    ("struct_pack_align2", "return hex(struct.pack('!2 b i', 1, 2))"),
    ("struct_pack_align_odd_size", "return hex(struct.pack('!4 b i3', 1, 2))"),
    ("struct_pack_negative_unsigned", "return hex(struct.pack('>I', -1))"),
    ("struct_pack_fraction", "return hex(struct.pack('>i', 2.9))"),
    ("struct_pack_big_unsigned", "return hex(struct.pack('>L', 2^63))"),
    ("struct_pack_huge", "return hex(struct.pack('>L', 2^64))"),
    ("struct_pack_huge_negative", "return hex(struct.pack('>l', -2^70))"),
    ("struct_pack_string_number", "return hex(struct.pack('>i', '10'))"),
    ("struct_pack_empty", "return hex(struct.pack(''))"),
    ("struct_pack_spaces", "return hex(struct.pack(' b ', 7))"),
    ("struct_pack_number_as_chars", "return hex(struct.pack('c0s', 123, 4.5))"),
    ("struct_pack_float_specials", "return hex(struct.pack('>f>d>f', 0/0, -0.0, 1e300))"),
    ("struct_pack_size_t_negative", "return hex(struct.pack('<T', -2))"),
    ("struct_pack_align_after_chars", "return hex(struct.pack('!8 c3 d h', 'abc', 1, 2))"),
    ("struct_pack_err_size", "return struct.pack('i33', 1)"),
    ("struct_pack_err_overflow", "return struct.pack('i99999999999', 1)"),
    ("struct_pack_err_align", "return struct.pack('!3 i', 1)"),
    ("struct_pack_err_align0", "return struct.pack('!0 i', 1)"),
    ("struct_pack_err_option", "return struct.pack('z', 1)"),
    ("struct_pack_err_digit", "return struct.pack('5', 1)"),
    ("struct_pack_err_short", "return struct.pack('c5', 'abc')"),
    ("struct_pack_err_short_later", "return struct.pack('bc5', 1, 'abc')"),
    ("struct_pack_err_missing", "return struct.pack('ii', 1)"),
    ("struct_pack_err_type", "return struct.pack('i', 'x')"),
    ("struct_pack_err_string_type", "return struct.pack('s', {})"),
    ("struct_pack_err_fmt", "return struct.pack()"),
    ("struct_pack_err_fmt_table", "return struct.pack({})"),
    # ---- struct.unpack ----
    ("struct_unpack_ints", "return all(struct.unpack('<i>h', struct.pack('<i>h', -5, 300)))"),
    ("struct_unpack_unsigned",
     "return all(struct.unpack('BHIL', struct.pack('BHIL', 255, 65535, 4294967295, 1)))"),
    ("struct_unpack_signed_bytes", "return all(struct.unpack('bbb', '\\255\\128\\127'))"),
    ("struct_unpack_i3", "return all(struct.unpack('>i3>I3', '\\255\\255\\254\\255\\255\\254'))"),
    ("struct_unpack_i16", "return all(struct.unpack('<i16', struct.pack('<i16', -1)))"),
    ("struct_unpack_i16_high", "return all(struct.unpack('>I16', string.rep('\\255', 16)))"),
    ("struct_unpack_i0", "return all(struct.unpack('i0i0', ''))"),
    ("struct_unpack_long_max", "return all(struct.unpack('>L>l', string.rep('\\255', 16)))"),
    ("struct_unpack_float", "return all(struct.unpack('>f<d', struct.pack('>f<d', 0.1, 0.1)))"),
    ("struct_unpack_chars", "return all(struct.unpack('c2c3', 'abcdef'))"),
    ("struct_unpack_c0", "return all(struct.unpack('bc0', '\\3abcdef'))"),
    ("struct_unpack_c0_string_length", "return all(struct.unpack('c0', '3'))"),
    ("struct_unpack_c0_no_size", "return all(struct.unpack('c0', 'abc'))"),
    ("struct_unpack_c0_after_pad", "return all(struct.unpack('xc0', '3abc'))"),
    ("struct_unpack_c0_string_size", "return all(struct.unpack('c1c0', '3abc'))"),
    ("struct_unpack_c0_zero", "return all(struct.unpack('bc0', '\\0abc'))"),
    ("struct_unpack_c0_too_long", "return all(struct.unpack('bc0', '\\9ab'))"),
    ("struct_unpack_zstrings", "return all(struct.unpack('ss', 'ab\\0cd\\0ef'))"),
    ("struct_unpack_zstring_unfinished", "return all(struct.unpack('s', 'abc'))"),
    ("struct_unpack_padding", "return all(struct.unpack('bxxb', '\\1\\0\\0\\2'))"),
    ("struct_unpack_align",
     "return all(struct.unpack('!4 b i b d', struct.pack('!4 b i b d', 1, 2, 3, 4)))"),
    ("struct_unpack_position", "return all(struct.unpack('b', 'abc', 2))"),
    ("struct_unpack_position_end", "return all(struct.unpack('b', 'abc', 4))"),
    ("struct_unpack_position_past", "return all(struct.unpack('b', 'abc', 5))"),
    ("struct_unpack_position_zero", "return all(struct.unpack('', 'abc', 0))"),
    ("struct_unpack_negative_position", "return all(struct.unpack('', 'abc', -1))"),
    ("struct_unpack_negative_position_data", "return all(struct.unpack('b', 'abc', -1))"),
    ("struct_unpack_far_position", "return all(struct.unpack('', 'abc', 9))"),
    ("struct_unpack_size_t", "return all(struct.unpack('<T>T', string.rep('\\255', 16)))"),
    ("struct_unpack_big_endian_signed", "return all(struct.unpack('>h>H', '\\255\\1\\255\\1'))"),
    ("struct_unpack_zstring_empty", "return all(struct.unpack('bs', '\\1'))"),
    ("struct_unpack_float_specials",
     "return all(struct.unpack('>f>d', struct.pack('>f>d', 1/0, -1/0)))"),
    ("struct_unpack_short", "return all(struct.unpack('i', 'abc'))"),
    ("struct_unpack_empty_format", "return all(struct.unpack('', 'abc'))"),
    ("struct_unpack_err_option", "return all(struct.unpack('q', 'abc'))"),
    ("struct_unpack_err_data", "return all(struct.unpack('i'))"),
    ("struct_unpack_err_position", "return all(struct.unpack('i', 'abcd', 'x'))"),
    ("struct_unpack_many",
     "local t = {struct.unpack(string.rep('b', 200), string.rep('\\1', 200))} return #t"),
    # ---- struct.size ----
    ("struct_size_basic", "return struct.size('bhilTfd')"),
    ("struct_size_aligned", "return struct.size('!8 b d b i')"),
    ("struct_size_chars", "return struct.size('c10 x i7')"),
    ("struct_size_unknown_letter", "return struct.size('zq9')"),
    ("struct_size_err_s", "return struct.size('s')"),
    ("struct_size_err_c0", "return struct.size('c0')"),
    ("struct_size_err_symbol", "return struct.size('?')"),
    ("struct_size_err_big", "return struct.size('i40')"),
    ("struct_size_err_align", "return struct.size('!6')"),
    # ---- cmsgpack.pack: numbers ----
    ("mp_int_boundaries",
     "local out = {} for _, n in ipairs({0, 1, 127, 128, 255, 256, 65535, 65536, 4294967295, "
     "4294967296, 2^53, -1, -32, -33, -128, -129, -32768, -32769, -2147483648, -2147483649, "
     "-2^53}) do out[#out + 1] = hex(cmsgpack.pack(n)) end return table.concat(out, ' ')"),
    ("mp_int_extremes",
     "return hex(cmsgpack.pack(2^63)) .. ' ' .. hex(cmsgpack.pack(-2^63)) .. ' ' .. "
     "hex(cmsgpack.pack(2^64)) .. ' ' .. hex(cmsgpack.pack(2^63 - 1024))"),
    ("mp_floats",
     "local out = {} for _, n in ipairs({0.5, -0.5, 1.1, 0.1, 1e300, -1e-300, 3.25, 2^-149, "
     "1/3}) do out[#out + 1] = hex(cmsgpack.pack(n)) end return table.concat(out, ' ')"),
    ("mp_special_floats",
     "return hex(cmsgpack.pack(1/0)) .. ' ' .. hex(cmsgpack.pack(-1/0)) .. ' ' .. "
     "hex(cmsgpack.pack(-0))"),
    ("mp_nan", "local n = 0/0 local s = cmsgpack.pack(n) return #s .. ' ' .. hex(s:sub(1, 1))"),
    ("mp_more_numbers",
     "local out = {} for _, n in ipairs({2^24 + 1, 1e10 + 0.5, 2^31, -2^31 - 0.5, 2^-1074, "
     "16777217.5, 1e15, -1e15}) do out[#out + 1] = hex(cmsgpack.pack(n)) end "
     "return table.concat(out, ' ')"),
    ("mp_numeric_string", "return hex(cmsgpack.pack('12'))"),
    # ---- cmsgpack.pack: strings ----
    ("mp_strings",
     "local out = {} for _, n in ipairs({0, 1, 31, 32, 255, 256, 65535, 65536}) do "
     "local s = cmsgpack.pack(string.rep('a', n)) out[#out + 1] = #s .. ':' .. "
     "hex(s:sub(1, 6)) end return table.concat(out, ' ')"),
    ("mp_binary_string", "return hex(cmsgpack.pack('a\\0b\\255'))"),
    # ---- cmsgpack.pack: other types ----
    ("mp_booleans", "return hex(cmsgpack.pack(true, false))"),
    ("mp_nil", "return hex(cmsgpack.pack(nil))"),
    ("mp_function", "return hex(cmsgpack.pack(type))"),
    ("mp_userdata", "return hex(cmsgpack.pack(cjson.null))"),
    ("mp_coroutine", "return hex(cmsgpack.pack(coroutine.create(function() end)))"),
    ("mp_multiple", "return hex(cmsgpack.pack(1, 'a', {2}))"),
    ("mp_no_args", "return cmsgpack.pack()"),
    # ---- cmsgpack.pack: tables ----
    ("mp_empty_table", "return hex(cmsgpack.pack({}))"),
    ("mp_array", "return hex(cmsgpack.pack({1, 2, 3}))"),
    ("mp_nested", "return hex(cmsgpack.pack({1, {2, {3}}, 'x'}))"),
    ("mp_array_sizes",
     "local out = {} for _, n in ipairs({15, 16, 65535, 65536}) do local t = {} "
     "for i = 1, n do t[i] = 0 end local s = cmsgpack.pack(t) out[#out + 1] = #s .. ':' .. "
     "hex(s:sub(1, 6)) end return table.concat(out, ' ')"),
    ("mp_map_one", "return hex(cmsgpack.pack({a = 1}))"),
    ("mp_map_sizes",
     "local out = {} for _, n in ipairs({15, 16, 65535, 65536}) do local t = {} "
     "for i = 1, n do t['k' .. i] = i end local s = cmsgpack.pack(t) "
     "out[#out + 1] = #s .. ':' .. hex(s:sub(1, 3)) end return table.concat(out, ' ')"),
    ("mp_hole", "return dump(cmsgpack.unpack(cmsgpack.pack({1, 2, nil, 4}))) .. ' ' .. "
     "hex(cmsgpack.pack({1, 2, nil, 4}):sub(1, 1))"),
    ("mp_zero_key", "return hex(cmsgpack.pack({[0] = 'a'}))"),
    ("mp_fraction_key", "return hex(cmsgpack.pack({[1.5] = 'a'}))"),
    ("mp_string_key", "return hex(cmsgpack.pack({['1'] = 'a'}))"),
    ("mp_negative_key", "return hex(cmsgpack.pack({[-1] = 'a'}))"),
    ("mp_huge_key", "return hex(cmsgpack.pack({[2^31] = 'a'}))"),
    ("mp_int_max_key", "return hex(cmsgpack.pack({[2^31 - 1] = 'a'}))"),
    ("mp_sparse_single", "return hex(cmsgpack.pack({[2] = 'a'}))"),
    ("mp_mixed_keys", "return dump(cmsgpack.unpack(cmsgpack.pack({1, 2, x = 3})))"),
    ("mp_bool_key", "return hex(cmsgpack.pack({[true] = 1}))"),
    ("mp_metatable_index",
     "local t = setmetatable({1, 2}, {__index = function() return 9 end}) "
     "return hex(cmsgpack.pack(t))"),
    ("mp_nesting",
     "local out = {} for _, depth in ipairs({14, 15, 16, 17, 20}) do local t = {} "
     "local inner = t for i = 1, depth do inner[1] = {} inner = inner[1] end "
     "out[#out + 1] = hex(cmsgpack.pack(t)) end return table.concat(out, ' ')"),
    ("mp_cycle",
     "local t = {} t[1] = t return hex(cmsgpack.pack(t))"),
    ("mp_map_nesting",
     "local t = {} local inner = t for i = 1, 17 do inner.k = {} inner = inner.k end "
     "return hex(cmsgpack.pack(t))"),
    # ---- cmsgpack.unpack ----
    ("mp_roundtrip_numbers",
     "return all(cmsgpack.unpack(cmsgpack.pack(0, 127, 128, 65536, -1, -33, -40000, "
     "-3000000000, 2^40, 0.5, 1.1, 1e300)))"),
    ("mp_roundtrip_table",
     "return dump(cmsgpack.unpack(cmsgpack.pack({a = {1, 2, {b = 'c'}}, [5] = true, "
     "d = false})))"),
    ("mp_unpack_formats",
     "return all(cmsgpack.unpack('\\204\\255\\205\\1\\0\\206\\0\\1\\0\\0"
     "\\208\\128\\209\\128\\0\\210\\128\\0\\0\\0\\192\\194\\195'))"),
    ("mp_unpack_int64",
     "return all(cmsgpack.unpack('\\211\\255\\255\\255\\255\\255\\255\\255\\254'))"),
    ("mp_unpack_uint64_high",
     "return all(cmsgpack.unpack('\\207\\255\\255\\255\\255\\255\\255\\255\\255'))"),
    ("mp_unpack_uint64_mid",
     "return all(cmsgpack.unpack('\\207\\0\\0\\1\\0\\0\\0\\0\\0'))"),
    ("mp_unpack_float32", "return all(cmsgpack.unpack('\\202\\62\\32\\0\\0'))"),
    ("mp_unpack_float64",
     "return all(cmsgpack.unpack('\\203\\63\\241\\153\\153\\153\\153\\153\\154'))"),
    ("mp_unpack_fixints", "return all(cmsgpack.unpack('\\0\\127\\224\\255'))"),
    ("mp_unpack_strings",
     "return all(cmsgpack.unpack('\\163abc\\217\\2xy\\218\\0\\1z\\219\\0\\0\\0\\2pq\\160'))"),
    ("mp_unpack_containers",
     "return all(cmsgpack.unpack('\\146\\1\\2\\220\\0\\1\\3\\221\\0\\0\\0\\1\\4"
     "\\129\\161a\\1\\222\\0\\1\\161b\\2\\223\\0\\0\\0\\1\\161c\\3\\144\\128'))"),
    ("mp_unpack_duplicate_keys", "return dump(cmsgpack.unpack('\\130\\161a\\1\\161a\\2'))"),
    ("mp_unpack_empty", "return all(cmsgpack.unpack(''))"),
    ("mp_unpack_number_arg", "return all(cmsgpack.unpack(5))"),
    ("mp_unpack_err_type", "return all(cmsgpack.unpack({}))"),
    ("mp_unpack_err_none", "return all(cmsgpack.unpack())"),
    ("mp_unpack_missing_header", "return all(cmsgpack.unpack('\\205\\1'))"),
    ("mp_unpack_missing_string", "return all(cmsgpack.unpack('\\165ab'))"),
    ("mp_unpack_missing_str32", "return all(cmsgpack.unpack('\\219\\0\\0\\0\\9ab'))"),
    ("mp_unpack_missing_array", "return all(cmsgpack.unpack('\\147\\1\\2'))"),
    ("mp_unpack_missing_map", "return all(cmsgpack.unpack('\\129\\1'))"),
    ("mp_unpack_missing_str8", "return all(cmsgpack.unpack('\\217\\5ab'))"),
    ("mp_unpack_missing_str8_header", "return all(cmsgpack.unpack('\\217'))"),
    ("mp_unpack_missing_array16", "return all(cmsgpack.unpack('\\220\\0'))"),
    ("mp_unpack_missing_map32", "return all(cmsgpack.unpack('\\223\\0\\0\\0\\2\\1\\2'))"),
    ("mp_unpack_missing_float", "return all(cmsgpack.unpack('\\203\\0\\0'))"),
    ("mp_unpack_table_key", "return dump(cmsgpack.unpack('\\129\\145\\1\\2'))"),
    ("mp_unpack_float_key", "return dump(cmsgpack.unpack('\\129\\202\\63\\128\\0\\0\\2'))"),
    ("mp_unpack_bad_c1", "return all(cmsgpack.unpack('\\193'))"),
    ("mp_unpack_bad_bin", "return all(cmsgpack.unpack('\\196\\1a'))"),
    ("mp_unpack_bad_ext", "return all(cmsgpack.unpack('\\212\\1\\1'))"),
    ("mp_unpack_bad_after_good", "return all(cmsgpack.unpack('\\1\\2\\199'))"),
    ("mp_unpack_bad_nested", "return all(cmsgpack.unpack('\\146\\1\\193'))"),
    ("mp_unpack_nil_key", "return all(cmsgpack.unpack('\\129\\192\\1'))"),
    ("mp_unpack_nil_value", "return dump(cmsgpack.unpack('\\130\\161a\\192\\161b\\1'))"),
    ("mp_unpack_array_nil", "return dump(cmsgpack.unpack('\\147\\1\\192\\3'))"),
    ("mp_unpack_many",
     "local t = {cmsgpack.unpack(string.rep('\\1', 5000))} return #t"),
    ("mp_unpack_too_many", "return select('#', cmsgpack.unpack(string.rep('\\1', 9000)))"),
    ("mp_unpack_deep",
     "local s = string.rep('\\145', 3000) .. '\\1' local t = cmsgpack.unpack(s) "
     "local d = 0 while type(t) == 'table' do d = d + 1 t = t[1] end return d"),
    ("mp_unpack_too_deep",
     "return all(cmsgpack.unpack(string.rep('\\145', 5000) .. '\\1'))"),
    ("mp_unpack_too_deep_map",
     "return all(cmsgpack.unpack(string.rep('\\129\\1', 9000) .. '\\1'))"),
    # ---- cmsgpack.unpack_one / unpack_limit ----
    ("mp_unpack_one", "local s = cmsgpack.pack(1, 'two', {3}) "
     "local a = {cmsgpack.unpack_one(s)} local b = {cmsgpack.unpack_one(s, a[1])} "
     "local c = {cmsgpack.unpack_one(s, b[1])} return dump({a, b, c})"),
    ("mp_unpack_one_empty", "return all(cmsgpack.unpack_one(''))"),
    ("mp_unpack_one_at_end", "return all(cmsgpack.unpack_one('\\1\\2', 2))"),
    ("mp_unpack_one_past_end", "return all(cmsgpack.unpack_one('\\1\\2', 3))"),
    ("mp_unpack_one_negative", "return all(cmsgpack.unpack_one('\\1\\2', -1))"),
    ("mp_unpack_one_extra_args", "return all(cmsgpack.unpack_one('\\1\\2', 1, 'x', 'y'))"),
    ("mp_unpack_one_bad_offset", "return all(cmsgpack.unpack_one('\\1\\2', 'x'))"),
    ("mp_unpack_one_missing", "return all(cmsgpack.unpack_one('\\1\\205', 1))"),
    ("mp_unpack_limit", "return all(cmsgpack.unpack_limit('\\1\\2\\3\\4', 2))"),
    ("mp_unpack_limit_offset", "return all(cmsgpack.unpack_limit('\\1\\2\\3\\4', 2, 1))"),
    ("mp_unpack_limit_rest", "return all(cmsgpack.unpack_limit('\\1\\2\\3\\4', 9, 1))"),
    ("mp_unpack_limit_zero", "return all(cmsgpack.unpack_limit('\\1\\2\\3\\4', 0))"),
    ("mp_unpack_limit_zero_offset", "return all(cmsgpack.unpack_limit('\\1\\2\\3\\4', 0, 2))"),
    ("mp_unpack_limit_negative", "return all(cmsgpack.unpack_limit('\\1\\2\\3\\4', -1))"),
    ("mp_unpack_limit_no_limit", "return all(cmsgpack.unpack_limit('\\1\\2'))"),
    ("mp_unpack_limit_fraction", "return all(cmsgpack.unpack_limit('\\1\\2\\3', 1.9, 1.2))"),
    ("mp_unpack_extra_args", "return all(cmsgpack.unpack('\\1\\2', 5, 6))"),
    ("mp_fields", "return cmsgpack._NAME .. '|' .. cmsgpack._VERSION .. '|' .. "
     "cmsgpack._COPYRIGHT .. '|' .. cmsgpack._DESCRIPTION"),
    # ---- cjson.encode ----
    ("cjson_encode_numbers",
     "local out = {} for _, n in ipairs({0, 1, -1, 1.5, 0.1, 1/3, 1e20, 1e21, 2^53, 1e-7, "
     "123456789012345678, 3.14159265358979, -0.0, 1e308}) do "
     "out[#out + 1] = cjson.encode(n) end return table.concat(out, ' ')"),
    ("cjson_encode_inf", "return cjson.encode(1/0)"),
    ("cjson_encode_nan", "return cjson.encode({0/0})"),
    ("cjson_encode_strings",
     "return cjson.encode({'a/b', 'q\"b\\\\s', '\\n\\r\\t\\b\\f', '\\1\\31\\127', "
     "'caf\\195\\169', ''})"),
    ("cjson_encode_scalars", "return cjson.encode(true) .. cjson.encode(false) .. "
     "cjson.encode(cjson.null) .. cjson.encode('x') .. cjson.encode(nil)"),
    ("cjson_encode_empty_table", "return cjson.encode({})"),
    ("cjson_encode_array", "return cjson.encode({1, 'two', {3, {}}, true})"),
    ("cjson_encode_object", "return cjson.encode({a = 1})"),
    ("cjson_encode_object_sorted",
     "local t = cjson.decode(cjson.encode({a = 1, b = {c = 'd'}, [5] = 6})) return dump(t)"),
    ("cjson_encode_sparse_ok", "return cjson.encode({1, 2, nil, 4})"),
    ("cjson_encode_sparse_small", "return cjson.encode({[1] = 'a', [3] = 'c'})"),
    ("cjson_encode_excessively_sparse", "return cjson.encode({[1] = 'a', [20] = 'b'})"),
    ("cjson_encode_sparse_safe", "return cjson.encode({[10] = 'a'})"),
    ("cjson_encode_number_keys", "return cjson.encode({[1.5] = 'a'})"),
    ("cjson_encode_bad_key", "return cjson.encode({[true] = 1})"),
    ("cjson_encode_function", "return cjson.encode({f = type})"),
    ("cjson_encode_depth",
     "local t = {} local inner = t for i = 1, 1000 do inner[1] = {} inner = inner[1] end "
     "return cjson.encode(t)"),
    ("cjson_encode_depth_ok",
     "local t = {} local inner = t for i = 1, 998 do inner[1] = {} inner = inner[1] end "
     "return #cjson.encode(t)"),
    ("cjson_encode_cycle", "local t = {} t[1] = t return cjson.encode(t)"),
    ("cjson_encode_no_args", "return cjson.encode()"),
    ("cjson_encode_two_args", "return cjson.encode(1, 2)"),
    # ---- cjson.decode ----
    ("cjson_decode_basic",
     "return dump(cjson.decode('{\"a\":[1,2.5,\"x\",true,false],\"b\":{\"c\":-1e3}}'))"),
    ("cjson_decode_null", "local t = cjson.decode('[null]') "
     "return tostring(t[1] == cjson.null) .. ' ' .. type(t[1])"),
    ("cjson_decode_numbers",
     "return all(cjson.decode('1e400'), cjson.decode('-0'), cjson.decode('0.1'), "
     "cjson.decode('123456789012345678901'))"),
    ("cjson_decode_hex", "return all(cjson.decode('0x10'))"),
    ("cjson_decode_nan_text", "return all(cjson.decode('nan'), cjson.decode('Infinity'))"),
    ("cjson_decode_unicode",
     "return hex(cjson.decode('\"\\\\u00e9\\\\u20ac\\\\ud83d\\\\ude00\\\\/\"'))"),
    ("cjson_decode_bad_surrogate", "return cjson.decode('\"\\\\ud83d\"')"),
    ("cjson_decode_invalid", "return cjson.decode('{bad}')"),
    ("cjson_decode_trailing", "return cjson.decode('[1] x')"),
    ("cjson_decode_empty", "return cjson.decode('')"),
    ("cjson_decode_unterminated", "return cjson.decode('[1,')"),
    ("cjson_decode_control_char", "return cjson.decode('\"a\\1\"')"),
    ("cjson_decode_single_quote", "return cjson.decode(\"'a'\")"),
    ("cjson_decode_depth",
     "return cjson.decode(string.rep('[', 1001) .. string.rep(']', 1001))"),
    ("cjson_decode_depth_ok",
     "local t = cjson.decode(string.rep('[', 1000) .. string.rep(']', 1000)) return type(t)"),
    ("cjson_decode_object_key_type", "return cjson.decode('{1:2}')"),
    ("cjson_decode_type_error", "return cjson.decode({})"),
    ("cjson_decode_number_arg", "return cjson.decode(5)"),
    ("cjson_decode_empty_array", "return dump(cjson.decode('[]')) .. dump(cjson.decode('{}'))"),
    # ---- cjson settings ----
    ("cjson_settings",
     "return all(cjson.encode_max_depth(), cjson.decode_max_depth(), "
     "cjson.encode_number_precision(), cjson.encode_invalid_numbers(), "
     "cjson.decode_invalid_numbers(), cjson.encode_keep_buffer(), "
     "cjson.encode_sparse_array())"),
    ("cjson_precision_change",
     "cjson.encode_number_precision(3) local s = cjson.encode({math.pi, 12345.678}) "
     "cjson.encode_number_precision(14) return s .. ' ' .. cjson.encode(math.pi)"),
    ("cjson_precision_invalid", "return cjson.encode_number_precision(20)"),
    ("cjson_sparse_change",
     "cjson.encode_sparse_array(true) local s = cjson.encode({[1] = 'a', [20] = 'b'}) "
     "cjson.encode_sparse_array(false, 2, 10) return s"),
    ("cjson_mixed_table", "return dump(cjson.decode(cjson.encode({1, 2, a = 3})))"),
    ("cjson_negative_index", "return cjson.encode({[-1] = 1})"),
    ("cjson_big_array",
     "local t = {} for i = 1, 10000 do t[i] = i end local s = cjson.encode(t) "
     "return #s .. ' ' .. #cjson.decode(s)"),
    ("cjson_decode_whitespace", "return dump(cjson.decode(' \\t\\n[ 1 , { \\\"a\\\" : 2 } ] '))"),
    ("cjson_decode_escapes",
     "return hex(cjson.decode('\\\"\\\\b\\\\f\\\\n\\\\r\\\\t\\\\\\\\\\\"'))"),
    ("cjson_fields", "return cjson._NAME .. ' ' .. cjson._VERSION .. ' ' .. type(cjson.new)"),
    # ---- bit ----
    ("bit_tobit", "return all(bit.tobit(2^32 + 1), bit.tobit(-1), bit.tobit(2^31), "
     "bit.tobit(1.5))"),
    ("bit_tohex", "return all(bit.tohex(255), bit.tohex(-1, -8), bit.tohex(0x1234, 2), "
     "bit.tohex(1, 0))"),
    ("bit_ops", "return all(bit.band(0xff, 0x0f, 0x3), bit.bor(1, 2, 4), bit.bxor(5, 3), "
     "bit.bnot(0))"),
    ("bit_shifts", "return all(bit.lshift(1, 31), bit.rshift(-1, 28), bit.arshift(-256, 4), "
     "bit.lshift(1, 33), bit.rol(0x80000001, 1), bit.ror(1, 1), bit.bswap(0x12345678))"),
    ("bit_more", "return all(bit.tohex(-1, 12), bit.tobit(2^53 + 7), bit.arshift(-1, 40), "
     "bit.rol(1, -1), bit.lshift(3, 32), bit.tohex(0xabcdef, -3))"),
    ("bit_error", "return bit.band('x')"),
    ("bit_no_args", "return bit.bor()"),
    # ---- Lua's own libraries ----
    ("lua_string", "return all(string.format('%5.2f|%d|%s|%q', 3.14159, 42, 'x', 'a\\nb'), "
     "string.rep('ab', 3), ('hello'):upper(), string.byte('A'), string.char(72, 105), "
     "string.find('hello', 'l+'), string.gsub('a,b,c', ',', ';'), string.sub('hello', -3))"),
    ("lua_table", "local t = {3, 1, 2} table.sort(t) table.insert(t, 4) "
     "return all(table.concat(t, ','), table.remove(t), #t, table.getn(t), table.maxn(t))"),
    ("lua_math", "return all(math.floor(2.7), math.ceil(2.1), math.huge, math.pi, "
     "math.max(1, 5, 3), math.fmod(7, 3), math.sqrt(16), math.abs(-2), math.modf(2.5))"),
    ("lua_base", "return all(tonumber('0x10'), tonumber('z', 36), tostring(nil), "
     "type(unpack), select('#', unpack({1, 2, 3})), _VERSION, type(loadstring), "
     "type(coroutine.wrap), type(gcinfo), type(setmetatable), type(xpcall))"),
    ("lua_absent", "return all(rawget(_G, 'io'), rawget(_G, 'os'), rawget(_G, 'package'), "
     "rawget(_G, 'require'), rawget(_G, 'module'))"),
    # What the engine's sandbox removes after the libraries are opened.
    ("lua_removed", "return all(rawget(_G, 'print'), rawget(_G, 'dofile'), "
     "rawget(_G, 'loadfile'), rawget(_G, 'debug'))"),
    ("lua_loadstring", "local f = loadstring('return 1 + 1') return f()"),
    ("lua_number_format", "return all(1e15, 1e16, 0.1, -0.0, 2^63, 1/0, 100)"),
]


# Errors raised outside any pcall: the whole EVAL error reply (position, script sha) compared.
UNCAUGHT_CASES: list[tuple[str, str]] = [
    ("mp_bad_format", "return cmsgpack.unpack('\\193')"),
    ("mp_nil_key", "return cmsgpack.unpack('\\129\\192\\1')"),
    ("mp_no_input", "return cmsgpack.pack()"),
    ("struct_bad_option", "return struct.pack('z')"),
    ("struct_too_short", "\nlocal s = 'ab'\nreturn struct.unpack('i', s)"),
    ("cjson_function", "return cjson.encode(type)"),
    ("cjson_bad_json", "return cjson.decode('{')"),
    ("bit_bad_argument", "return bit.band('x')"),
]


def _eval(conn, body: str):
    return conn.execute("EVAL", script_for(body), "0")


@pytest.fixture
def eval_available(keywarden):
    with keywarden.raw() as conn:
        reply = conn.execute("EVAL", "return 1", "0")
    if isinstance(reply, ReplyError) and b"unknown command" in bytes(reply):
        pytest.skip("keywarden has no EVAL yet")


@pytest.mark.parametrize("name,body", CASES, ids=[name for name, _ in CASES])
def test_lua_library_case(keywarden, reference_redis, eval_available, name, body):
    with keywarden.raw() as ours, reference_redis.raw() as theirs:
        expected = _eval(theirs, body)
        actual = _eval(ours, body)
    assert actual == expected, f"{name}: {body}"


@pytest.mark.parametrize("name,body", UNCAUGHT_CASES, ids=[name for name, _ in UNCAUGHT_CASES])
def test_lua_library_uncaught_error(keywarden, reference_redis, eval_available, name, body):
    with keywarden.raw() as ours, reference_redis.raw() as theirs:
        expected = theirs.execute("EVAL", body, "0")
        actual = ours.execute("EVAL", body, "0")
    assert isinstance(expected, ReplyError)
    assert actual == expected, f"{name}: {body}"
