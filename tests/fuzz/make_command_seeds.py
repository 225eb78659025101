#!/usr/bin/env python3
"""Writes the command target's seed corpus (tests/fuzz/corpus/command/): for every command and
subcommand of the table, one input that sets up keys of the types it reads, then calls it with
typical arguments, encoded as command_fuzz.cc decodes its input (every argument as raw bytes).
Usage: tests/fuzz/make_command_seeds.py <command_replay or command_fuzz binary>
Run it again after adding commands: the encoding holds indexes into the table."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Typical arguments per command (after the name and subcommand); anything not listed gets
# "k" plus a couple of generic forms.
EXAMPLES = {
    'set': [['k', 'v', 'EX', '10'], ['k', 'v', 'NX', 'GET'],
            ['k', 'v', 'PXAT', '1800000000000', 'XX'], ['k', 'v', 'IFEQ', '10', 'KEEPTTL'],
            ['k', 'v', 'IFDNE', '0123456789abcdef', 'GET', 'PX', '100']],
    'delex': [['k', 'IFEQ', '10'], ['k', 'IFDEQ', '0123456789ABCDEF'], ['l']],
    'delifeq': [['k', '10']], 'digest': [['k']],
    'lock.acquire': [['lk', 'o', '1000'], ['h', 'f', '50', 'TIMEOUT', '0', 'BIND'],
                     ['k', 'o', '9223372036854775807', 'TIMEOUT', '-1']],
    'lock.release': [['h', 'f'], ['lk', 'o', 'ALL'], ['k', 'o']], 'lock.info': [['h'], ['lk']],
    'lock.fenced': [['r', '1', 'SET', 'k', 'v'], ['r', '0', 'HSET', 'h', 'f', 'v']],
    'xadd': [['x', '*', 'a', '1'], ['x', 'MAXLEN', '~', '10', 'LIMIT', '5', '*', 'f', 'v'],
             ['x', 'NOMKSTREAM', 'MINID', '=', '0', '1-1', 'f', 'v']],
    'xrange': [['x', '-', '+', 'COUNT', '2']], 'xrevrange': [['x', '+', '(0-1']],
    'xread': [['COUNT', '2', 'STREAMS', 'x', '0'], ['BLOCK', '1', 'STREAMS', 'x', '$']],
    'xreadgroup': [['GROUP', 'g', 'c', 'COUNT', '1', 'NOACK', 'STREAMS', 'x', '>']],
    'xtrim': [['x', 'MAXLEN', '1'], ['x', 'MINID', '~', '5-0']], 'xdel': [['x', '1-1', '0-0']],
    'xack': [['x', 'g', '1-1']], 'xpending': [['x', 'g', 'IDLE', '0', '-', '+', '10', 'c']],
    'xclaim': [['x', 'g', 'c', '0', '1-1', 'JUSTID', 'FORCE', 'RETRYCOUNT', '2']],
    'xautoclaim': [['x', 'g', 'c', '0', '0-0', 'COUNT', '5', 'JUSTID']],
    'xsetid': [['x', '9999-0', 'ENTRIESADDED', '5', 'MAXDELETEDID', '1-0']],
    'msetex': [['2', 'k', '1', 'k2', '2', 'NX', 'EX', '10'], ['1', 'k', 'v', 'XX', 'KEEPTTL']],
    'getex': [['k', 'PERSIST'], ['k', 'EX', '5']],
    'setrange': [['k', '3', 'abc']], 'getrange': [['k', '0', '-1']],
    'incrbyfloat': [['k', '1.5']], 'incrby': [['k', '5']], 'decrby': [['k', '5']],
    'mset': [['k', '1', 'k2', '2']], 'msetnx': [['a', '1', 'b', '2']], 'mget': [['k', 'k2']],
    'lcs': [['k', 'k2', 'IDX', 'MINMATCHLEN', '1', 'WITHMATCHLEN']],
    'expire': [['k', '10', 'NX'], ['k', '-1']], 'pexpire': [['k', '100', 'GT']],
    'expireat': [['k', '1800000000', 'LT']], 'pexpireat': [['k', '1800000000000']],
    'lpush': [['l', 'a', 'b']], 'rpush': [['l', 'a', 'b']], 'linsert': [['l', 'BEFORE', 'a', 'x']],
    'lrange': [['l', '0', '-1']], 'lpos': [['l', 'a', 'RANK', '-1', 'COUNT', '0', 'MAXLEN', '5']],
    'lmove': [['l', 'l2', 'LEFT', 'RIGHT']], 'blmove': [['l', 'l2', 'LEFT', 'RIGHT', '0.1']],
    'lmpop': [['2', 'l', 'l2', 'LEFT', 'COUNT', '2']], 'blmpop': [['0.1', '1', 'l', 'RIGHT']],
    'blpop': [['l', 'l2', '0.1']], 'brpop': [['l', '0.1']], 'brpoplpush': [['l', 'l2', '0.1']],
    'lset': [['l', '0', 'x']], 'ltrim': [['l', '1', '-1']], 'lrem': [['l', '-1', 'a']],
    'lindex': [['l', '-1']], 'lpop': [['l', '2']], 'rpop': [['l']],
    'hset': [['h', 'f', 'v', 'g', '1']], 'hincrbyfloat': [['h', 'g', '0.5']],
    'hincrby': [['h', 'g', '2']], 'hrandfield': [['h', '-5', 'WITHVALUES']],
    'hscan': [['h', '0', 'MATCH', 'f*', 'COUNT', '1']], 'hmget': [['h', 'f', 'x']],
    'hgetdel': [['h', 'FIELDS', '1', 'f']],
    'hexpire': [['h', '10', 'FIELDS', '1', 'f'], ['h', '0', 'NX', 'FIELDS', '2', 'f', 'g']],
    'hpexpire': [['h', '5', 'GT', 'FIELDS', '1', 'g']],
    'hexpireat': [['h', '1', 'FIELDS', '1', 'f'], ['h', '70368744177', 'FIELDS', '1', 'g']],
    'hpexpireat': [['h', '1800000000000', 'LT', 'FIELDS', '1', 'f']],
    'httl': [['h', 'FIELDS', '2', 'f', 'x']], 'hpttl': [['h', 'FIELDS', '1', 'g']],
    'hexpiretime': [['h', 'FIELDS', '0', 'f']], 'hpexpiretime': [['h', 'FIELDS', '1', 'f']],
    'hpersist': [['h', 'FIELDS', '1', 'f']],
    'hgetex': [['h', 'PX', '1', 'FIELDS', '1', 'f'], ['h', 'PERSIST', 'FIELDS', '1', 'g']],
    'hsetex': [['h', 'FNX', 'EX', '10', 'FIELDS', '1', 'n'], ['h', 'KEEPTTL', 'FIELDS', '1', 'f', 'v']],
    'sadd': [['s', 'a', 'b', '1']],
    'smove': [['s', 's2', 'a']],
    'sintercard': [['2', 's', 's2', 'LIMIT', '1']],
    'srandmember': [['s', '-3']], 'spop': [['s', '2']], 'sscan': [['s', '0', 'COUNT', '2']],
    'sinterstore': [['d', 's', 's2']], 'smismember': [['s', 'a', 'z']],
    'zadd': [['z', '1', 'a', '2.5', 'b'], ['z', 'GT', 'CH', 'INCR', '3', 'a']],
    'zrange': [['z', '0', '-1', 'WITHSCORES'], ['z', '(1', '+inf', 'BYSCORE', 'LIMIT', '0', '1'],
               ['z', '[a', '(c', 'BYLEX', 'REV']],
    'zrangestore': [['d', 'z', '0', '-1']], 'zrangebyscore': [['z', '-inf', '(2', 'WITHSCORES']],
    'zrangebylex': [['z', '-', '+', 'LIMIT', '1', '1']], 'zcount': [['z', '(1', '3']],
    'zunionstore': [['d', '2', 'z', 'z2', 'WEIGHTS', '2', '0.5', 'AGGREGATE', 'MAX']],
    'zunion': [['2', 'z', 's', 'WITHSCORES']],
    'zinter': [['2', 'z', 'z2']],
    'zdiff': [['2', 'z', 'z2']],
    'zmpop': [['1', 'z', 'MIN', 'COUNT', '2']], 'bzmpop': [['0.1', '1', 'z', 'MAX']],
    'bzpopmin': [['z', '0.1']],
    'zincrby': [['z', '1', 'a']],
    'zrandmember': [['z', '-2', 'WITHSCORES']],
    'zscan': [['z', '0']], 'zrank': [['z', 'a', 'WITHSCORE']], 'zmscore': [['z', 'a', 'x']],
    'zremrangebyscore': [['z', '-inf', '1']], 'zremrangebyrank': [['z', '0', '0']],
    'zremrangebylex': [['z', '-', '[b']],
    'geoadd': [['g', '13.361389', '38.115556', 'Palermo'], ['g', 'XX', 'CH', '1', '2', 'a'],
               ['g', '181', '90', 'x']],
    'geopos': [['z', 'a', 'x']], 'geohash': [['z', 'a', 'b']], 'geodist': [['z', 'a', 'c', 'km']],
    'geosearch': [['z', 'FROMMEMBER', 'a', 'BYRADIUS', '500', 'km', 'WITHCOORD'],
                  ['z', 'FROMLONLAT', '0', '0', 'BYBOX', '1e9', '1'],
                  ['z', 'BYRADIUS', '1', 'm', 'COUNT', '1', 'ANY']],
    'geosearchstore': [['d', 'z', 'FROMMEMBER', 'b', 'BYRADIUS', '1e6'],
                       ['d', 'z', 'FROMLONLAT', '180', '85', 'BYBOX', '5']],
    'georadius': [['z', '-180', '-85', '100', 'km', 'STOREDIST'],
                  ['z', '0', '0', '2e7', 'm', 'DESC']],
    'georadius_ro': [['z', '0', '0', '1', 'ft', 'WITHHASH', 'ASC']],
    'georadiusbymember': [['z', 'a', '10', 'mi', 'STORE', 'd'], ['z', 'x', '1', 'm']],
    'georadiusbymember_ro': [['z', 'c', '0', 'm', 'WITHDIST', 'COUNT']],
    'sort': [['l', 'ALPHA', 'LIMIT', '0', '2', 'DESC'],
             ['s', 'BY', 'w_*', 'GET', '#', 'GET', 'h->f', 'STORE', 'd']],
    'sort_ro': [['z', 'BY', 'nosort']],
    'scan': [['0', 'MATCH', 'k*', 'COUNT', '10', 'TYPE', 'string']], 'keys': [['*']],
    'rename': [['k', 'k3']], 'copy': [['k', 'k4', 'DB', '1', 'REPLACE']], 'move': [['k', '2']],
    'object': [['ENCODING', 'k']], 'restore': [['k9', '0', 'bad-payload', 'REPLACE']],
    'migrate': [['127.0.0.1', '1', 'k', '0', '10']], 'select': [['1']], 'swapdb': [['0', '1']],
    'flushall': [['ASYNC']], 'flushdb': [['SYNC']], 'hello': [['3'], ['2', 'SETNAME', 'x']],
    'eval': [["return redis.call('get', KEYS[1])", '1', 'k'], ["return {1,{2},{err='x'}}", '0']],
    'evalsha': [['e0e1f9fabfc9d4800c877a703b823ac0578ff8db', '0']],
    'fcall': [['f', '1', 'l', 'x']], 'publish': [['ch', 'hi']], 'subscribe': [['ch']],
    'psubscribe': [['c*']], 'ssubscribe': [['ch']], 'spublish': [['ch', 'x']],
    'watch': [['k']], 'echo': [['hi']], 'ping': [[], ['x']], 'dump': [['z']],
    'append': [['k', 'xyz']], 'getdel': [['k']], 'strlen': [['k']], 'touch': [['k', 'l']],
    'pfadd': [['p', 'x', 'y'], ['k', 'a']], 'pfcount': [['p'], ['p', 'p2', 'missing']],
    'pfmerge': [['p2', 'p', 'missing'], ['p', 'p']],
    'pfdebug': [['GETREG', 'p'], ['DECODE', 'p'], ['TODENSE', 'p'], ['ENCODING', 'p']],
    'unlink': [['k', 's']], 'del': [['k', 'z']], 'randomkey': [[]], 'dbsize': [[]],
    'setbit': [['b', '100', '1'], ['k', '7', '0']], 'getbit': [['b', '100'], ['k', '-1']],
    'bitcount': [['b', '0', '-1', 'BIT'], ['k', '-2', '-1']],
    'bitpos': [['b', '1', '2', '-1', 'BIT'], ['k', '0', '1']],
    'bitop': [['AND', 'd', 'b', 'k'], ['NOT', 'd', 'k']],
    'bitfield': [['b', 'OVERFLOW', 'SAT', 'INCRBY', 'i5', '#3', '100', 'GET', 'u63', '1']],
    'bitfield_ro': [['b', 'GET', 'i64', '#2', 'GET', 'u1', '0']],
}
SUB_EXAMPLES = {
    ('command', 'info'): [['get', 'set']],
    ('command', 'getkeys'): [['sort', 'l', 'STORE', 'd'],
                             ['migrate', 'h', '1', '', '0', '5000', 'AUTH2', 'u', 'p', 'KEYS', 'a']],
    ('command', 'getkeysandflags'): [['lmove', 'a', 'b', 'LEFT', 'LEFT'],
                                     ['zunionstore', 'd', '2', 'a', 'b', 'WEIGHTS', '1', '2']],
    ('command', 'docs'): [['zadd']], ('command', 'list'): [['FILTERBY', 'ACLCAT', 'list']],
    ('xgroup', 'create'): [['x', 'g', '$', 'MKSTREAM', 'ENTRIESREAD', '0']],
    ('xinfo', 'stream'): [['x', 'FULL', 'COUNT', '2']],
    ('object', 'encoding'): [['z']], ('object', 'freq'): [['k']], ('object', 'idletime'): [['k']],
    ('script', 'load'): [["return 1"]],
    ('script', 'exists'): [['e0e1f9fabfc9d4800c877a703b823ac0578ff8db']],
    ('script', 'flush'): [['ASYNC']],
    ('function', 'load'): [["#!lua name=lib\nredis.register_function('f', function(k, a) "
                            "return redis.call('rpush', k[1], a[1]) end)"]],
    ('function', 'list'): [['WITHCODE', 'LIBRARYNAME', 'l*']], ('function', 'delete'): [['lib']],
    ('function', 'restore'): [['bad', 'REPLACE']],
    ('pubsub', 'channels'): [['c*']], ('pubsub', 'numsub'): [['ch']],
    # Hostile rule strings: unbalanced selectors, odd key permissions, bad hashes, bars.
    ('acl', 'setuser'): [['u', 'on', '>pw', '~k*', '%R~r*', '%W~w*', '&c*'],
                         ['u', '+@all', '-flushall', '+select|0', '-config|set'],
                         ['u', '(~a', '+get)', '(+set ~b &c)'],
                         ['u', '(', '%RWX~a', '#' + 'a' * 63, '+config|get|x', '+|', '-@'],
                         ['u', '("")', '(\'a', 'resetkeys', 'allkeys', '~x', 'reset', '!zz']],
    ('acl', 'getuser'): [['u'], ['default']], ('acl', 'deluser'): [['u', 'v']],
    ('acl', 'dryrun'): [['u', 'get', 'k'], ['u', 'zunionstore', 'd', '2', 'k', 'x'],
                        ['default', 'publish', 'c', 'm']],
    ('acl', 'log'): [['2'], ['RESET'], []], ('acl', 'cat'): [['string'], []],
    ('acl', 'genpass'): [['5'], ['4096']],
}
# Seeds that mix commands: a restricted user logs in, then its commands, keys, channels and
# scripts are checked (client, command, subcommand, arguments).
MIXED_SEEDS = {
    'acl_checks': [
        (0, 'acl', 'setuser', ['u', 'on', '>pw', '+@all', '-flushall', '~k*', '&c']),
        (0, 'acl', 'setuser', ['u', '(+set ~w)']),
        (1, 'auth', '', ['u', 'pw']), (1, 'get', '', ['k']), (1, 'get', '', ['x']),
        (1, 'set', '', ['w', '1']), (1, 'flushall', '', []), (1, 'publish', '', ['d', 'm']),
        (1, 'eval', '', ["return redis.pcall('get', 'x')", '0']),
        (1, 'multi', '', []), (1, 'flushall', '', []), (1, 'exec', '', []),
        (0, 'acl', 'setuser', ['u', 'resetchannels']), (0, 'acl', 'deluser', ['u']),
        (1, 'get', '', ['k']), (0, 'acl', 'log', []),
    ],
}
SETUP = [['SET', 'k', '10'], ['RPUSH', 'l', 'a', 'b', 'c'], ['HSET', 'h', 'f', 'v', 'g', '1'],
         ['SADD', 's', 'a', 'b', '1'], ['ZADD', 'z', '1', 'a', '2', 'b', '3', 'c'],
         ['SET', 'w_a', '3'], ['PFADD', 'p', 'a', 'b', 'c']]


def encode_command(index, args, client=0):
    out = bytes([client, index >> 8, index & 0xff, len(args)])
    for arg in args:
        data = arg.encode()[:255]
        # kind 3: up to 24 raw bytes, kind 9: up to 255 (command_fuzz.cc, argument())
        out += bytes([3 if len(data) <= 24 else 9, len(data)]) + data
    return out


def main():
    binary = sys.argv[1]
    listing = subprocess.run([binary], env=dict(os.environ, KEYWARDEN_FUZZ_LIST_COMMANDS='1'),
                             capture_output=True, text=True, check=True).stdout
    table = [tuple((line.split(' ', 1) + [''])[:2]) for line in listing.splitlines()]
    table = [(name, sub.strip()) for name, sub in table]
    index_of = {entry: i for i, entry in enumerate(table)}
    out_dir = os.path.join(HERE, 'corpus', 'command')
    os.makedirs(out_dir, exist_ok=True)
    written = 0
    for (name, sub), index in index_of.items():
        if sub:
            examples = SUB_EXAMPLES.get((name, sub), [[], ['k']])
        else:
            examples = EXAMPLES.get(name, [['k'], ['k', 'a', '1']])
        seed = b''
        for setup in SETUP:
            setup_index = index_of[(setup[0].lower(), '')]
            seed += encode_command(setup_index, setup[1:])
        for n, args in enumerate(examples):
            seed += encode_command(index, args[:7], client=n % 3)
        if len(seed) > 4096:
            continue
        file_name = (name + ('_' + sub if sub else '')).replace('|', '_')
        with open(os.path.join(out_dir, file_name), 'wb') as f:
            f.write(seed)
        written += 1
    for file_name, steps in MIXED_SEEDS.items():
        seed = b''
        for client, name, sub, args in steps:
            seed += encode_command(index_of[(name, sub)], args[:7], client)
        with open(os.path.join(out_dir, file_name), 'wb') as f:
            f.write(seed)
        written += 1
    print(f'{written} seeds in {out_dir}')


if __name__ == '__main__':
    main()
