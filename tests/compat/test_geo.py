"""The geo commands against a stock redis-server 7.0: the same data, the same commands, the raw
reply bytes compared (RESP2 and RESP3).

Two parts:

* hand-written cases for every command, option and error (COMMANDS), run after SETUP;
* a seeded randomized run: random points (uniform, and crowded near the poles' storable limits
  and the antimeridian) in a small set (listpack) and a large one (skiplist), then random
  queries — GEOSEARCH by radius or box, from a member or a position, every unit, ASC/DESC,
  COUNT with and without ANY, every WITH* combination, GEORADIUS and GEORADIUSBYMEMBER with
  their options and STORE/STOREDIST, GEODIST/GEOPOS/GEOHASH of random members — every reply
  compared byte for byte.

and members sharing positions, so that COUNT's partial sort meets equal distances (Redis's
pqsort puts ties in an order of its own, which keywarden reproduces).
"""

from __future__ import annotations

import random

import pytest

from conftest import Map

SETUP = [
    ("GEOADD", "Sicily", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669",
     "Catania"),
    ("GEOADD", "Sicily", "12.758489", "38.788135", "edge1", "17.241510", "38.788135", "edge2"),
    ("GEOADD", "poles", "180", "85.05112878", "ne", "-180", "-85.05112878", "sw", "0", "0", "o",
     "179.9999", "0", "am1", "-179.9999", "0", "am2", "0", "85", "n", "0", "-85", "s"),
    ("ZADD", "weird", "-1", "neg", "1e300", "big", "1.5", "frac", "inf", "pinf", "-inf", "ninf",
     "0", "zero"),
    ("SET", "str", "value"),
    ("HSET", "ahash", "f", "v"),
]

COMMANDS = [
    # GEOADD: options, errors, replies.
    ("GEOADD", "g", "1", "2", "a"),
    ("GEOADD", "g", "1", "2", "a", "3", "4", "b"),
    ("GEOADD", "g", "NX", "5", "6", "a", "7", "8", "c"),
    ("GEOPOS", "g", "a", "c"),
    ("GEOADD", "g", "XX", "5", "6", "a", "7", "8", "d"),
    ("GEOPOS", "g", "a", "d"),
    ("GEOADD", "g", "CH", "9", "10", "a", "3", "4", "b", "1", "1", "e"),
    ("GEOADD", "g", "XX", "CH", "1", "1", "a"),
    ("GEOADD", "g", "ch", "nx", "1", "1", "a", "2", "2", "f"),
    ("GEOADD", "g", "NX", "XX", "1", "2", "a"),
    ("GEOADD", "g", "CH", "CH", "CH"),
    ("GEOADD", "g", "1", "2"),
    ("GEOADD", "g", "1", "2", "a", "3"),
    ("GEOADD", "g", "abc", "2", "a"),
    ("GEOADD", "g", "1", "abc", "a"),
    ("GEOADD", "g", "1", "nan", "a"),
    ("GEOADD", "g", "1", "1e400", "a"),
    ("GEOADD", "g", "200", "100", "a"),
    ("GEOADD", "g", "-180.000001", "0", "a"),
    ("GEOADD", "g", "0", "85.06", "a"),
    ("GEOADD", "g", "0", "-85.06", "a"),
    ("GEOADD", "g", "1e300", "1", "a"),
    ("GEOADD", "g", "1", "1", "ok", "500", "1", "bad"),
    ("ZSCORE", "g", "ok"),
    ("GEOADD", "str", "1", "1", "a"),
    ("GEOADD", "str", "500", "1", "a"),
    ("GEOADD", "newkey", "XX", "1", "1", "a"),
    ("EXISTS", "newkey"),
    ("GEOADD", "g"),
    ("GEOADD", "g", "1", "2"),
    ("GEOADD", "g", " 1", "2", "sp"),
    ("GEOADD", "g", "0x10", "2", "hex"),
    ("GEOADD", "g", "+1.5e1", "-.5", "exp"),
    ("ZRANGE", "g", "0", "-1", "WITHSCORES"),
    ("OBJECT", "ENCODING", "g"),
    ("GEOADD", "big", "1", "1", "x" * 65),
    ("OBJECT", "ENCODING", "big"),
    # GEOPOS
    ("GEOPOS", "Sicily", "Palermo", "Catania", "nosuch"),
    ("GEOPOS", "poles", "ne", "sw", "o", "am1", "am2", "n", "s"),
    ("GEOPOS", "weird", "neg", "big", "frac", "pinf", "ninf", "zero"),
    ("GEOPOS", "nokey", "a", "b"),
    ("GEOPOS", "Sicily"),
    ("GEOPOS", "str", "a"),
    ("GEOPOS",),
    # GEOHASH
    ("GEOHASH", "Sicily", "Palermo", "Catania", "nosuch"),
    ("GEOHASH", "poles", "ne", "sw", "o", "am1", "am2", "n", "s"),
    ("GEOHASH", "weird", "neg", "big", "frac", "pinf", "ninf", "zero"),
    ("GEOHASH", "nokey", "a"),
    ("GEOHASH", "Sicily"),
    ("GEOHASH", "str", "a"),
    # GEODIST
    ("GEODIST", "Sicily", "Palermo", "Catania"),
    ("GEODIST", "Sicily", "Palermo", "Catania", "m"),
    ("GEODIST", "Sicily", "Palermo", "Catania", "km"),
    ("GEODIST", "Sicily", "Palermo", "Catania", "KM"),
    ("GEODIST", "Sicily", "Palermo", "Catania", "ft"),
    ("GEODIST", "Sicily", "Palermo", "Catania", "Mi"),
    ("GEODIST", "Sicily", "Palermo", "Catania", "yd"),
    ("GEODIST", "Sicily", "Palermo", "Catania", "km", "x"),
    ("GEODIST", "Sicily", "Palermo", "Palermo"),
    ("GEODIST", "Sicily", "Palermo", "nosuch"),
    ("GEODIST", "Sicily", "nosuch", "Palermo", "km"),
    ("GEODIST", "nokey", "a", "b"),
    ("GEODIST", "nokey", "a", "b", "furlong"),
    ("GEODIST", "str", "a", "b"),
    ("GEODIST", "str", "a", "b", "bad"),
    ("GEODIST", "poles", "ne", "sw"),
    ("GEODIST", "poles", "am1", "am2", "m"),
    ("GEODIST", "weird", "neg", "ninf"),
    ("GEODIST", "Sicily", "Palermo"),
    # GEORADIUS
    ("GEORADIUS", "Sicily", "15", "37", "200", "km"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHCOORD"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHHASH"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST", "WITHCOORD", "WITHHASH",
     "ASC"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "km", "withdist", "desc"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "1"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "1", "DESC"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "1", "ANY"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "km", "ANY"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "0"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "-3"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "x"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "km", "BOGUS"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "mm"),
    ("GEORADIUS", "Sicily", "15", "37", "-1", "km"),
    ("GEORADIUS", "Sicily", "15", "37", "x", "km"),
    ("GEORADIUS", "Sicily", "15", "370", "1", "km"),
    ("GEORADIUS", "Sicily", "x", "37", "1", "km"),
    ("GEORADIUS", "Sicily", "15", "37", "0", "km"),
    ("GEORADIUS", "Sicily", "13.361389", "38.115556", "0", "m", "WITHDIST"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "dst"),
    ("ZRANGE", "dst", "0", "-1", "WITHSCORES"),
    ("OBJECT", "ENCODING", "dst"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "km", "STOREDIST", "dst"),
    ("ZRANGE", "dst", "0", "-1", "WITHSCORES"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "dst", "STOREDIST", "dst2"),
    ("ZRANGE", "dst2", "0", "-1", "WITHSCORES"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "dst", "COUNT", "1", "DESC"),
    ("ZRANGE", "dst", "0", "-1", "WITHSCORES"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "dst", "WITHDIST"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE"),
    ("GEORADIUS", "Sicily", "0", "0", "1", "m", "STORE", "dst"),
    ("EXISTS", "dst"),
    ("GEORADIUS", "nokey", "15", "37", "200", "km"),
    ("GEORADIUS", "nokey", "15", "37", "200", "km", "STORE", "dst2"),
    ("EXISTS", "dst2"),
    ("GEORADIUS", "nokey", "15", "370", "200", "km"),
    ("GEORADIUS", "str", "15", "37", "200", "km"),
    ("GEORADIUS", "str", "15", "370", "200", "km"),
    ("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "str"),
    ("TYPE", "str"),
    ("SET", "str", "value"),
    ("GEORADIUS", "Sicily", "15", "37", "200"),
    # GEORADIUS_RO
    ("GEORADIUS_RO", "Sicily", "15", "37", "200", "km", "WITHDIST", "ASC"),
    ("GEORADIUS_RO", "Sicily", "15", "37", "200", "km", "STORE", "dst"),
    ("GEORADIUS_RO", "Sicily", "15", "37", "200", "km", "STOREDIST", "dst"),
    # GEORADIUSBYMEMBER and _RO
    ("GEORADIUSBYMEMBER", "Sicily", "Palermo", "200", "km", "WITHDIST", "WITHCOORD"),
    ("GEORADIUSBYMEMBER", "Sicily", "Palermo", "500", "km", "ASC", "COUNT", "2"),
    ("GEORADIUSBYMEMBER", "Sicily", "nosuch", "500", "km"),
    ("GEORADIUSBYMEMBER", "Sicily", "nosuch", "-1", "km"),
    ("GEORADIUSBYMEMBER", "Sicily", "Palermo", "-1", "km"),
    ("GEORADIUSBYMEMBER", "Sicily", "Palermo", "1", "parsec"),
    ("GEORADIUSBYMEMBER", "nokey", "a", "b", "c"),
    ("GEORADIUSBYMEMBER", "nokey", "a", "b", "c", "STORE", "dst"),
    ("GEORADIUSBYMEMBER", "nokey", "a", "b", "c", "BOGUS"),
    ("GEORADIUSBYMEMBER", "nokey", "a", "b", "c", "STORE", "dst", "WITHDIST"),
    ("GEORADIUSBYMEMBER", "Sicily", "Palermo", "500", "km", "STOREDIST", "dst"),
    ("ZRANGE", "dst", "0", "-1", "WITHSCORES"),
    ("GEORADIUSBYMEMBER_RO", "Sicily", "Palermo", "500", "km", "WITHHASH"),
    ("GEORADIUSBYMEMBER_RO", "Sicily", "Palermo", "500", "km", "STORE", "dst"),
    ("GEORADIUSBYMEMBER", "str", "a", "1", "m"),
    ("GEORADIUSBYMEMBER", "weird", "neg", "100", "km", "WITHCOORD"),
    ("GEORADIUSBYMEMBER", "weird", "big", "100", "km", "WITHCOORD", "WITHHASH"),
    # GEOSEARCH
    ("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC"),
    ("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km", "ASC",
     "WITHCOORD", "WITHDIST", "WITHHASH"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "400", "400", "km", "DESC",
     "WITHDIST"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1000", "km", "COUNT", "2",
     "ANY"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1000", "km", "COUNT", "2",
     "ANY", "ASC"),
    ("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "200", "200", "mi"),
    ("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "200", "0", "km"),
    ("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "0", "0", "km"),
    ("GEOSEARCH", "Sicily", "BYRADIUS", "200", "km", "FROMLONLAT", "15", "37"),
    ("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "FROMMEMBER", "Palermo", "BYRADIUS", "1",
     "m"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "FROMLONLAT", "15", "37", "BYRADIUS", "1",
     "m"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "FROMMEMBER", "Catania", "BYRADIUS", "1",
     "m"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "m", "BYBOX", "1", "1",
     "m"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "1", "1", "m", "BYRADIUS", "1",
     "m"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "m", "BYRADIUS", "300",
     "km"),
    ("GEOSEARCH", "Sicily", "BYRADIUS", "1", "m", "WITHDIST", "DESC"),
    ("geoSearch", "Sicily", "BYRADIUS", "1", "m", "WITHDIST", "DESC"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "WITHDIST", "DESC"),
    ("gEoSeArCh", "Sicily", "FROMMEMBER", "Palermo", "WITHDIST", "DESC"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "nosuch", "BYRADIUS", "-1", "m"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "-1", "m"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "r", "m"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "x"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "w", "1", "m"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "1", "h", "m"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "-1", "1", "m"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "1", "-1", "m"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "1", "1", "x"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "1", "1"),
    ("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "95", "BYRADIUS", "1", "m"),
    ("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "x", "BYRADIUS", "1", "m"),
    ("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "BYRADIUS", "1", "m"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "m", "ANY"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "m", "COUNT", "0"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "m", "STORE", "x"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "m", "STOREDIST"),
    ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "m", "WITHDIST",
     "BOGUS"),
    ("GEOSEARCH", "nokey", "FROMMEMBER", "a", "BYRADIUS", "1", "m"),
    ("GEOSEARCH", "nokey", "FROMMEMBER", "a", "BYRADIUS", "-1", "m"),
    ("GEOSEARCH", "nokey", "FROMMEMBER", "a", "BYRADIUS", "1", "m", "ANY"),
    ("GEOSEARCH", "nokey", "FROMMEMBER", "a"),
    ("GEOSEARCH", "nokey", "FROMMEMBER", "a", "WITHDIST"),
    ("GEOSEARCH", "str", "FROMMEMBER", "a", "BYRADIUS", "1", "m"),
    ("GEOSEARCH", "poles", "FROMLONLAT", "0", "0", "BYRADIUS", "20000", "km", "ASC",
     "WITHDIST"),
    ("GEOSEARCH", "poles", "FROMLONLAT", "180", "0", "BYRADIUS", "100", "km", "WITHCOORD"),
    ("GEOSEARCH", "poles", "FROMLONLAT", "-180", "0", "BYBOX", "300", "300", "km", "WITHCOORD"),
    ("GEOSEARCH", "poles", "FROMLONLAT", "0", "85.05", "BYRADIUS", "1000", "km", "WITHDIST"),
    ("GEOSEARCH", "poles", "FROMLONLAT", "0", "-85.05", "BYBOX", "5000", "5000", "km",
     "WITHDIST"),
    ("GEOSEARCH", "poles", "FROMLONLAT", "0", "0", "BYBOX", "40000", "20000", "km", "ASC"),
    ("GEOSEARCH", "weird", "FROMLONLAT", "0", "0", "BYRADIUS", "20000", "km", "WITHHASH",
     "WITHCOORD"),
    # GEOSEARCHSTORE
    ("GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"),
    ("ZRANGE", "dst", "0", "-1", "WITHSCORES"),
    ("GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km",
     "STOREDIST"),
    ("ZRANGE", "dst", "0", "-1", "WITHSCORES"),
    ("GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km",
     "STOREDIST", "COUNT", "1", "DESC"),
    ("ZRANGE", "dst", "0", "-1", "WITHSCORES"),
    ("GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km",
     "WITHDIST"),
    ("GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km",
     "STORE", "x"),
    ("GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "m"),
    ("EXISTS", "dst"),
    ("GEOSEARCHSTORE", "Sicily", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "100", "km",
     "STOREDIST"),
    ("ZRANGE", "Sicily", "0", "-1", "WITHSCORES"),
    ("GEOSEARCHSTORE", "dst", "nokey", "FROMMEMBER", "a", "BYRADIUS", "1", "m"),
    ("SET", "dst", "x"),
    ("GEOSEARCHSTORE", "dst", "nokey", "FROMMEMBER", "a", "BYRADIUS", "1", "m"),
    ("EXISTS", "dst"),
    ("GEOSEARCHSTORE", "str", "poles", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
    ("TYPE", "str"),
    ("GEOSEARCHSTORE", "dst", "str", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
    ("GEOSEARCHSTORE", "dst", "poles", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
    ("GEOSEARCHSTORE", "dst", "poles", "FROMLONLAT", "0", "0", "BYRADIUS", "1"),
    # Metadata of the key specifications.
    ("COMMAND", "GETKEYS", "GEORADIUS", "k", "1", "2", "3", "m", "STORE", "a"),
    ("COMMAND", "GETKEYS", "GEORADIUS", "k", "1", "2", "3", "m", "STORE", "a", "STOREDIST", "b"),
    ("COMMAND", "GETKEYS", "GEORADIUSBYMEMBER", "k", "m", "3", "m", "STOREDIST", "a"),
    ("COMMAND", "GETKEYS", "GEOSEARCHSTORE", "d", "s", "FROMMEMBER", "m", "BYRADIUS", "1", "m"),
]


def run(server, protocol: int, setup, commands) -> list[bytes]:
    with server.raw() as conn:
        if protocol == 3:
            assert isinstance(conn.execute("HELLO", "3"), Map)
        for command in setup:
            conn.execute(*command)
        # Pipelined in batches: one round trip per batch, replies kept as raw bytes.
        out: list[bytes] = []
        batch = 200
        for start in range(0, len(commands), batch):
            chunk = commands[start:start + batch]
            for command in chunk:
                conn.send_command(*command)
            for _ in chunk:
                out.append(conn.read_reply_with_raw()[1])
        return out


def compare(keywarden, reference_redis, protocol, setup, commands):
    keywarden.flushall()
    reference_redis.flushall()
    kw = run(keywarden, protocol, setup, commands)
    ref = run(reference_redis, protocol, setup, commands)
    mismatches = [f"{' '.join(map(str, command))}: keywarden {k!r}, redis {r!r}"
                  for command, k, r in zip(commands, kw, ref) if k != r]
    assert not mismatches, f"{len(mismatches)} of {len(commands)} differ:\n" + "\n".join(
        mismatches[:20])
    return len(commands)


@pytest.mark.parametrize("protocol", [2, 3])
def test_geo_commands_match_redis(keywarden, reference_redis, protocol):
    compared = compare(keywarden, reference_redis, protocol, SETUP, COMMANDS)
    print(f"\ngeo hand-written cases (RESP{protocol}): {compared} compared, all identical")


# --- The randomized run ---------------------------------------------------------------------

UNITS = ["m", "km", "ft", "mi", "M", "KM"]
LAT_LIMIT = 85.05112878


def random_point(rng: random.Random) -> tuple[float, float]:
    kind = rng.random()
    if kind < 0.15:  # near a pole's storable limit
        lat = rng.choice([1, -1]) * (LAT_LIMIT - rng.random() * 3)
        return rng.uniform(-180, 180), lat
    if kind < 0.3:  # near the antimeridian
        lon = rng.choice([1, -1]) * (180 - rng.random() * 2)
        return lon, rng.uniform(-LAT_LIMIT, LAT_LIMIT)
    if kind < 0.55:  # a dense cluster, so that small radii find something
        return 2 + rng.gauss(0, 0.5), 45 + rng.gauss(0, 0.5)
    return rng.uniform(-180, 180), rng.uniform(-LAT_LIMIT, LAT_LIMIT)


def build_set(rng: random.Random, key: str, size: int) -> tuple[list, list[str]]:
    commands = []
    members = []
    seen = set()
    args: list[str] = []
    while len(members) < size:
        lon, lat = random_point(rng)
        lon_text = f"{lon:.6f}"
        lat_text = f"{lat:.6f}"
        if (lon_text, lat_text) in seen:
            continue
        seen.add((lon_text, lat_text))
        member = f"m{len(members)}"
        members.append(member)
        args += [lon_text, lat_text, member]
        if len(args) >= 300:
            commands.append(("GEOADD", key, *args))
            args = []
    if args:
        commands.append(("GEOADD", key, *args))
    return commands, members


def random_size(rng: random.Random) -> str:
    scale = rng.choice([1, 10, 100, 1000, 10000, 100000, 1000000, 5000000])
    return f"{rng.random() * scale:.3f}"


def random_options(rng: random.Random, store: bool) -> list[str]:
    # Each option is one group of words; the groups go in random order (the parser takes them
    # in any order).
    groups: list[list[str]] = []
    if not store:
        for flag in ("WITHDIST", "WITHCOORD", "WITHHASH"):
            if rng.random() < 0.4:
                groups.append([flag])
    order = rng.random()
    if order < 0.3:
        groups.append(["ASC"])
    elif order < 0.6:
        groups.append(["DESC"])
    if rng.random() < 0.4:
        groups.append(["COUNT", str(rng.choice([1, 2, 3, 5, 10, 50, 1000]))])
        if rng.random() < 0.3:
            groups.append(["ANY"])
    rng.shuffle(groups)
    return [word for group in groups for word in group]


def random_query(rng: random.Random, key: str, members: list[str]) -> list[tuple]:
    kind = rng.random()
    unit = rng.choice(UNITS)
    if kind < 0.45:
        if rng.random() < 0.5:
            origin = ["FROMMEMBER", rng.choice(members)]
        else:
            lon, lat = random_point(rng)
            origin = ["FROMLONLAT", f"{lon:.6f}", f"{lat:.6f}"]
        if rng.random() < 0.5:
            shape = ["BYRADIUS", random_size(rng), unit]
        else:
            shape = ["BYBOX", random_size(rng), random_size(rng), unit]
        store = rng.random() < 0.15
        options = random_options(rng, store)
        if store:
            if rng.random() < 0.5:
                options.append("STOREDIST")
            return [("GEOSEARCHSTORE", "dst", key, *origin, *shape, *options),
                    ("ZRANGE", "dst", "0", "-1", "WITHSCORES")]
        return [("GEOSEARCH", key, *origin, *shape, *options)]
    if kind < 0.8:
        store = rng.random() < 0.15
        options = random_options(rng, store)
        if store:
            options += [rng.choice(["STORE", "STOREDIST"]), "dst"]
        if rng.random() < 0.5:
            lon, lat = random_point(rng)
            command = ("GEORADIUS", key, f"{lon:.6f}", f"{lat:.6f}", random_size(rng), unit,
                       *options)
        else:
            command = ("GEORADIUSBYMEMBER", key, rng.choice(members), random_size(rng), unit,
                       *options)
        if store:
            return [command, ("ZRANGE", "dst", "0", "-1", "WITHSCORES")]
        return [command]
    if kind < 0.9:
        return [("GEODIST", key, rng.choice(members), rng.choice(members), unit)]
    if kind < 0.95:
        return [("GEOPOS", key, *rng.sample(members, 3))]
    return [("GEOHASH", key, *rng.sample(members, 3))]


@pytest.mark.parametrize("seed,size,queries", [(22, 100, 1500), (2207, 4000, 2500)])
def test_geo_randomized_matches_redis(keywarden, reference_redis, seed, size, queries):
    rng = random.Random(seed)
    setup, members = build_set(rng, "pts", size)
    commands: list[tuple] = []
    while len(commands) < queries:
        commands += random_query(rng, "pts", members)
    compared = compare(keywarden, reference_redis, 2, setup + [("OBJECT", "ENCODING", "pts")],
                       commands)
    print(f"\ngeo randomized run (seed {seed}): {size} points, {compared} commands compared, "
          f"all identical")


def test_geo_equal_distances_order_as_redis(keywarden, reference_redis):
    """Members at a handful of shared positions: every COUNT, ASC/DESC/none, radius and box,
    across pqsort's insertion-sort (< 7), median-of-three and ninther (> 40) sizes."""
    rng = random.Random(5)
    positions = [("1", "1"), ("1.01", "1"), ("1", "1.01"), ("0.99", "0.99"), ("1.02", "1.02"),
                 ("1.0", "1.005")]
    setup = []
    args: list[str] = []
    for i in range(300):
        args += [*rng.choice(positions), f"m{i}"]
        if len(args) >= 90:
            setup.append(("GEOADD", "dup", *args))
            args = []
    commands = []
    for count in (1, 2, 3, 5, 6, 7, 8, 10, 20, 40, 41, 50, 100, 150, 299, 300, 400):
        for order in (["ASC"], ["DESC"], []):
            commands.append(("GEOSEARCH", "dup", "FROMLONLAT", "1", "1", "BYRADIUS", "10", "km",
                             "COUNT", str(count), *order))
            commands.append(("GEOSEARCH", "dup", "FROMLONLAT", "1.003", "1.004", "BYBOX", "10",
                             "10", "km", "COUNT", str(count), *order, "WITHDIST"))
            commands.append(("GEORADIUSBYMEMBER", "dup", "m7", "3", "km", "COUNT", str(count),
                             *order))
    compared = compare(keywarden, reference_redis, 2, setup, commands)
    print(f"\ngeo equal distances: {compared} commands compared, all identical")
