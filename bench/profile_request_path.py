#!/usr/bin/python3
"""CPU profiles of the request path: keywarden-server and redis-server under redis-benchmark.

Starts a fresh keywarden-server and a fresh redis-server side by side (bench/_common.py), and
for each load (SET and GET, pipeline 1 and 16, 50 clients, a fixed number of requests, random
keys out of --keyspace) and each server it runs `perf record -e cpu-clock -F 997` on the
server's process for exactly the duration of the redis-benchmark run, then:

* turns `perf script` into folded stacks (one line per distinct stack, root first, frames
  joined by ';', then the sample count), written as <out>/<label>-<server>-<test>-p<depth>.folded;
* draws a flame graph of them as a static SVG (<same name>.svg; width of a frame ∝ its samples,
  colour by where the code lives: kernel, the server's own binary, other user-space code; hover
  a frame for its name and share), leaving out frames below --min-share of the samples;
* prints, per server and load, the text a reader needs without opening the SVG: the share of
  samples in the kernel and in user space (by library), the top functions by self and by
  inclusive samples, and the share spent in the server binary's own code.

Stacks are unwound with DWARF (`--call-graph dwarf`) by default: neither Debian's redis-server
nor keywarden's Release build keeps frame pointers, so `-g` (frame pointers) yields the leaf
function and garbage above it for user-space code. `--call-graph fp` gives perf's `-g`.
The VM has no hardware counters, hence the cpu-clock software event.

Needs root (or perf_event_paranoid ≤ 0 and readable kallsyms), /usr/bin/perf, redis-benchmark.

    sudo /usr/bin/python3 bench/profile_request_path.py --keywarden build/src/server/keywarden-server \\
        --label after --out-dir /tmp/profiles
    /usr/bin/python3 bench/profile_request_path.py --quick --out-dir /tmp/p   # a smoke run
    /usr/bin/python3 bench/profile_request_path.py --fold-only perf-script.txt --svg out.svg

The folding and drawing code (fold_perf_script, FlameNode, render_svg, summarize) is plain
Python with no dependencies, tested by tests/e2e/test_bench_profile_smoke.py on a canned
`perf script` excerpt.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import hashlib
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (HOST, Server, add_server_arguments, markdown_table,  # noqa: E402
                     resolve_server_arguments, running_servers)

PERF = shutil.which("perf") or "/usr/bin/perf"
TESTS = ("set", "get")
PIPELINES = (1, 16)
# Fixed request counts: with the cpu-clock sampler at 997 Hz, about 1,000 samples per second of
# the server's CPU time, so a few thousand samples per load at ~10 µs (P1) and ~1 µs (P16).
REQUESTS = {1: 200_000, 16: 2_000_000}
QUICK_REQUESTS = {1: 5_000, 16: 50_000}

# --------------------------------------------------------------------------------------------
# folding `perf script` output
# --------------------------------------------------------------------------------------------

# "comm  pid/tid  time:  period  event:" opens a sample; the frames follow, one per line,
# "  <hex address> <symbol+offset> (<dso>)", leaf first.
_SAMPLE_HEAD = re.compile(r"^(?P<comm>\S.*?)\s+(?P<pid>\d+)(?:/(?P<tid>\d+))?\s+"
                          r"(?:\[\d+\]\s+)?[\d.]+:\s+(?:(?P<period>\d+)\s+)?\S+:")
_FRAME = re.compile(r"^\s+(?P<addr>[0-9a-fA-F]+)\s+(?P<sym>.*?)\s+\((?P<dso>[^()]*(?:\([^()]*\)[^()]*)*)\)\s*$")
_OFFSET = re.compile(r"\+0x[0-9a-fA-F]+$")

KERNEL, OWN, USER = "kernel", "own", "user"


def shorten_symbol(symbol: str) -> str:
    """A C++ name without its parameter list and with template arguments collapsed to <…>, so
    that frames stay readable: 'ns::f<std::string>(int) const' → 'ns::f<…>'. C names pass."""
    symbol = _OFFSET.sub("", symbol.strip())
    # drop the parameter list (and the qualifiers after it): the first '(' outside template
    # brackets and lambda braces that follows a name; "(anonymous namespace)::x" keeps its own
    depth = 0
    for i, ch in enumerate(symbol):
        if ch in "<{":
            depth += 1
        elif ch in ">}":
            depth = max(0, depth - 1)
        elif ch == "(" and depth == 0 and i > 0 and (symbol[i - 1].isalnum()
                                                     or symbol[i - 1] in "_>]"):
            symbol = symbol[:i]
            break
    out = []
    depth = 0
    for ch in symbol:
        if ch == "<":
            if depth == 0:
                out.append("<…>")
            depth += 1
        elif ch == ">" and depth > 0:
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out).replace(";", ":") or "?"


def frame_label(symbol: str, dso: str) -> str:
    """'name [library]': the library (basename of the DSO) names where the frame lives; the
    kernel is 'kernel'. Unknown symbols keep only the library."""
    lib = "kernel" if dso.startswith("[kernel") else os.path.basename(dso) or dso
    if lib == "[vdso]":
        lib = "vdso"
    name = symbol.strip()
    if not name or name == "[unknown]" or name.startswith("[unknown]"):
        name = "?"
    else:
        name = shorten_symbol(name)
    return f"{name} [{lib}]"


def label_kind(label: str, own_dsos: tuple[str, ...]) -> str:
    lib = label[label.rfind("[") + 1:-1] if label.endswith("]") else ""
    if lib == "kernel":
        return KERNEL
    if any(lib == os.path.basename(own) for own in own_dsos if own):
        return OWN
    return USER


def fold_perf_script(lines, *, keep_comm: bool = True) -> collections.Counter:
    """Folded stacks out of `perf script` text: Counter{'root;…;leaf': samples}.

    The root is the thread's name (so threads other than the main one show apart) when
    keep_comm. Frames with an unknown symbol in an unknown DSO (what a broken unwind leaves
    above the real frames) are dropped, and so are consecutive duplicates (perf repeats a
    frame when a DWARF unwind restarts at the system-call stub)."""
    folded: collections.Counter = collections.Counter()
    comm = None
    frames: list[str] = []

    def flush():
        nonlocal comm, frames
        if comm is not None:
            stack = []
            for label in reversed(frames):  # root first
                if stack and stack[-1] == label:
                    continue
                stack.append(label)
            if keep_comm:
                stack.insert(0, comm.replace(";", ":") + " [thread]")
            if stack:
                folded[";".join(stack)] += 1
        comm, frames = None, []

    for raw in lines:
        line = raw.rstrip("\n")
        if not line.strip():
            flush()
            continue
        if not line[0].isspace():
            flush()
            head = _SAMPLE_HEAD.match(line)
            if head:
                comm = head.group("comm")
            continue
        frame = _FRAME.match(line)
        if frame is None or comm is None:
            continue
        sym, dso = frame.group("sym"), frame.group("dso")
        if dso in ("[unknown]", "") and (sym.startswith("[unknown]") or not sym):
            continue
        frames.append(frame_label(sym, dso))
    flush()
    return folded


def read_folded(text: str) -> collections.Counter:
    folded: collections.Counter = collections.Counter()
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            folded[stack] += int(count)
    return folded


def write_folded(folded: collections.Counter) -> str:
    return "".join(f"{stack} {n}\n" for stack, n in sorted(folded.items()))


# --------------------------------------------------------------------------------------------
# the summary
# --------------------------------------------------------------------------------------------

def summarize(folded: collections.Counter, own_dsos: tuple[str, ...], top: int = 15,
              everywhere: float = 0.99) -> dict:
    """Shares of the samples: by where the leaf frame lives (kernel / server binary / each other
    library), inside system calls (a kernel entry_SYSCALL frame on the stack) and elsewhere in
    the kernel (interrupts, softirqs), and the top functions by self samples (leaf) and by
    inclusive samples (anywhere on the stack, once per stack). Frames on at least `everywhere`
    of the stacks (_start, main, the event loop) are left out of the inclusive list: they say
    nothing."""
    total = sum(folded.values())
    by_kind: collections.Counter = collections.Counter()
    by_lib: collections.Counter = collections.Counter()
    self_count: collections.Counter = collections.Counter()
    incl_count: collections.Counter = collections.Counter()
    syscalls = 0
    for stack, n in folded.items():
        frames = [f for f in stack.split(";") if not f.endswith("[thread]")]
        if not frames:
            continue
        leaf = frames[-1]
        by_kind[label_kind(leaf, own_dsos)] += n
        by_lib[leaf[leaf.rfind("[") + 1:-1]] += n
        self_count[leaf] += n
        for f in set(frames):
            incl_count[f] += n
        if any(f.startswith("entry_SYSCALL") for f in frames):
            syscalls += n

    def share(n):
        return n / total if total else 0.0

    inclusive = [(f, share(n)) for f, n in incl_count.most_common() if share(n) < everywhere]
    return {
        "samples": total,
        "kernel": share(by_kind[KERNEL]),
        "user": share(by_kind[USER] + by_kind[OWN]),
        "own_self": share(by_kind[OWN]),
        "syscalls": share(syscalls),
        "by_library": [(lib, share(n)) for lib, n in by_lib.most_common()],
        "top_self": [(f, share(n)) for f, n in self_count.most_common(top)],
        "top_inclusive": inclusive[:top],
    }


def summary_text(title: str, s: dict) -> str:
    pct = lambda v: f"{100 * v:.1f} %"  # noqa: E731
    out = [f"### {title}", "",
           f"{s['samples']:,} samples; kernel {pct(s['kernel'])}, user space {pct(s['user'])}; "
           f"inside system calls (inclusive) {pct(s['syscalls'])}; "
           f"the server binary's own code (self) {pct(s['own_self'])}", "",
           "by library (leaf frame): " + ", ".join(f"{lib} {pct(v)}"
                                                    for lib, v in s["by_library"][:8]), ""]
    rows = []
    for i in range(max(len(s["top_self"]), len(s["top_inclusive"]))):
        a = s["top_self"][i] if i < len(s["top_self"]) else ("", 0)
        b = s["top_inclusive"][i] if i < len(s["top_inclusive"]) else ("", 0)
        rows.append([str(i + 1), f"`{a[0]}`", pct(a[1]), f"`{b[0]}`", pct(b[1])])
    out.append(markdown_table(["#", "top by self samples", "self", "top by inclusive samples",
                               "inclusive"], rows, right={0, 2, 4}))
    out.append("\n(inclusive: frames on nearly every stack, such as main and the event loop, "
               "left out)")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# the flame graph
# --------------------------------------------------------------------------------------------

class FlameNode:
    __slots__ = ("name", "count", "children")

    def __init__(self, name: str):
        self.name = name
        self.count = 0
        self.children: dict[str, FlameNode] = {}

    @classmethod
    def from_folded(cls, folded: collections.Counter) -> "FlameNode":
        root = cls("all")
        for stack, n in folded.items():
            node = root
            node.count += n
            for frame in stack.split(";"):
                child = node.children.get(frame)
                if child is None:
                    child = node.children[frame] = cls(frame)
                child.count += n
                node = child
        return root

    def depth(self) -> int:
        return 1 + max((c.depth() for c in self.children.values()), default=0)


# colours: kernel in oranges, the server's own code in greens, other user-space code in blues;
# the shade varies with the name so that neighbours stand apart, and stays the same across runs
_PALETTE = {KERNEL: ((230, 140, 40), (250, 200, 110)),
            OWN: ((70, 170, 70), (160, 220, 130)),
            USER: ((70, 130, 210), (150, 190, 240)),
            "thread": ((180, 180, 180), (200, 200, 200))}


def frame_colour(name: str, kind: str) -> str:
    lo, hi = _PALETTE[kind]
    t = int(hashlib.md5(name.encode()).hexdigest()[:4], 16) / 0xFFFF
    return "rgb({},{},{})".format(*(int(a + (b - a) * t) for a, b in zip(lo, hi)))


def render_svg(folded: collections.Counter, title: str, own_dsos: tuple[str, ...] = (),
               min_share: float = 0.002, width: int = 1200, row: int = 16) -> str:
    """A static flame graph: the root ('all') at the bottom, each frame's callees stacked on
    top of it, widths proportional to samples; children ordered by samples, largest first.
    Frames below min_share of all samples are left out (their samples stay in the parent)."""
    root = FlameNode.from_folded(folded)
    total = max(root.count, 1)
    min_count = total * min_share
    margin, top = 10, 40
    scale = (width - 2 * margin) / total
    rects: list[str] = []
    max_depth = 0

    def place(node: FlameNode, x: float, depth: int):
        nonlocal max_depth
        max_depth = max(max_depth, depth)
        rects.append((node, x, depth))
        cx = x
        for child in sorted(node.children.values(), key=lambda c: (-c.count, c.name)):
            if child.count >= min_count:
                place(child, cx, depth + 1)
            cx += child.count * scale

    place(root, margin, 0)
    height = top + (max_depth + 1) * row + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="11">',
           f'<rect x="0" y="0" width="{width}" height="{height}" fill="#fbfbf6"/>',
           f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="15">'
           f'{html.escape(title)}</text>',
           f'<text x="{margin}" y="34" font-size="11" fill="#555">{total:,} samples; '
           'orange: kernel, green: the server binary, blue: other user space '
           f'(libc, vDSO, allocator); frames under {100 * min_share:g} % left out; hover for '
           'names</text>']
    char_w = 6.6
    for node, x, depth in rects:
        w = node.count * scale
        y = top + (max_depth - depth) * row
        if depth == 0:
            kind = "thread"
        elif node.name.endswith("[thread]"):
            kind = "thread"
        else:
            kind = label_kind(node.name, own_dsos)
        name = html.escape(node.name)
        share = 100 * node.count / total
        out.append(f'<g><title>{name} — {node.count:,} samples, {share:.2f} %</title>'
                   f'<rect x="{x:.2f}" y="{y}" width="{max(w - 0.5, 0.3):.2f}" height="{row - 1}" '
                   f'fill="{frame_colour(node.name, kind)}" rx="1"/>')
        fit = int((w - 4) / char_w)
        if fit >= 3:
            text = node.name if len(node.name) <= fit else node.name[:fit - 1] + "…"
            out.append(f'<text x="{x + 2:.2f}" y="{y + row - 4}">{html.escape(text)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# the runs
# --------------------------------------------------------------------------------------------

def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def profile_load(args, server, test: str, pipeline: int, requests: int, data_path: Path) -> dict:
    call_graph = ["--call-graph", "dwarf,16384"] if args.call_graph == "dwarf" else ["-g"]
    perf = subprocess.Popen([args.perf, "record", "-e", "cpu-clock", "-F", str(args.frequency),
                             *call_graph, "-p", str(server.pid), "-o", str(data_path)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(args.attach_delay)  # perf attaches to the running process
    if perf.poll() is not None:
        raise RuntimeError(f"perf record failed: {perf.stderr.read()}")
    argv = [args.redis_benchmark, "-h", HOST, "-p", str(server.port), "-c", str(args.clients),
            "-n", str(requests), "-P", str(pipeline), "-r", str(args.keyspace), "-t", test,
            "--csv"]
    cpu_before = server.cpu_ns()
    start = time.monotonic()
    bench = subprocess.run(argv, capture_output=True, text=True, timeout=args.run_timeout)
    wall = time.monotonic() - start
    cpu = server.cpu_ns() - cpu_before
    perf.send_signal(signal.SIGINT)
    try:
        _, perf_err = perf.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        perf.kill()
        raise
    if bench.returncode != 0 or not server.alive():
        raise RuntimeError(f"redis-benchmark against {server.name} failed: {bench.stderr}")
    if not data_path.exists():
        raise RuntimeError(f"perf record wrote nothing: {perf_err}")
    rps = next((float(r.split(",")[1].strip('"')) for r in bench.stdout.splitlines()
                if r and not r.startswith('"test"')), float("nan"))
    return {"server": server.name, "test": test, "pipeline": pipeline, "requests": requests,
            "wall_s": round(wall, 3), "rps": rps, "cpu_us_per_request": cpu / 1000 / requests,
            "load_average": load_average()}


def perf_script_lines(args, data_path: Path):
    proc = subprocess.Popen([args.perf, "script", "-i", str(data_path), "-F",
                             "comm,pid,tid,time,period,event,ip,sym,dso", "--no-inline"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            errors="replace")
    try:
        yield from proc.stdout
    finally:
        proc.stdout.close()
        proc.wait()


def run_profiles(args) -> int:
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="kw-profile-"))
    names = [n for n in ("keywarden", "redis") if n in args.servers]
    baseline = None
    if args.baseline:
        names.insert(1, "baseline")
        baseline = Server("baseline", os.path.abspath(args.baseline))
    requests = QUICK_REQUESTS if args.quick else REQUESTS
    if args.requests:
        requests = {p: args.requests for p in args.pipelines}
    results = []
    try:
        with running_servers(args) as servers:
            own = {"keywarden": (args.keywarden,), "redis": (args.redis, "redis-check-rdb"),
                   "baseline": (args.baseline,)}
            if baseline is not None:
                servers["baseline"] = baseline.start()
            loads = [(t, p) for t in args.tests for p in args.pipelines]
            for index, (test, pipeline) in enumerate(loads):
                # alternate which server goes first, so that neither always meets the
                # machine's state the other one left
                order = names if index % 2 == 0 else names[::-1]
                for name in order:
                    server = servers[name]
                    label = args.baseline_label if name == "baseline" else args.label
                    stem = (f"{label}-" if label and name != "redis" else "") + \
                        f"{'keywarden' if name == 'baseline' else name}-{test}-p{pipeline}"
                    data = scratch / f"{stem}.data"
                    run = profile_load(args, server, test, pipeline, requests[pipeline], data)
                    folded = fold_perf_script(perf_script_lines(args, data))
                    if not args.keep_data:
                        data.unlink(missing_ok=True)
                    (out_dir / f"{stem}.folded").write_text(write_folded(folded))
                    shown = f"keywarden, {label}" if name != "redis" and label else \
                        ("keywarden" if name != "redis" else "redis")
                    title = (f"{shown} ({os.path.basename(server.binary)})"
                             f": {test.upper()} -P {pipeline} -c {args.clients}, "
                             f"{requests[pipeline]:,} requests")
                    (out_dir / f"{stem}.svg").write_text(
                        render_svg(folded, title, own[name], args.min_share))
                    summary = summarize(folded, own[name])
                    run.update({"stem": stem, "summary": summary})
                    results.append(run)
                    print(f"{stem}: {run['rps']:,.0f} req/s, {run['cpu_us_per_request']:.2f} "
                          f"CPU µs/req, {summary['samples']:,} samples, load {run['load_average']}",
                          file=sys.stderr)
                    run["server"] = shown
                    run["order"] = (index, names.index(name))
                    run["text"] = summary_text(f"{shown}, {test.upper()} -P {pipeline}", summary)
    finally:
        if baseline is not None:
            baseline.cleanup()
        if not args.keep_data:
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            print(f"perf data kept in {scratch}", file=sys.stderr)

    results.sort(key=lambda r: r.pop("order"))
    texts = [r.pop("text") for r in results]
    pct = lambda v: f"{100 * v:.1f}"  # noqa: E731
    rows = [[r["server"], r["test"].upper(), str(r["pipeline"]), f"{r['summary']['samples']:,}",
             f"{r['cpu_us_per_request']:.2f}",
             f"{r['cpu_us_per_request'] * r['summary']['kernel']:.2f}",
             f"{r['cpu_us_per_request'] * r['summary']['user']:.2f}",
             pct(r["summary"]["kernel"]),
             pct(r["summary"]["syscalls"]), pct(r["summary"]["user"]),
             pct(r["summary"]["own_self"])] for r in results]
    print(f"# request-path profiles, "
          f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC\n")
    print(markdown_table(["server", "test", "P", "samples", "CPU µs/req", "kernel µs/req",
                          "user µs/req", "kernel %", "in syscalls %", "user %", "own code %"],
                         rows, right=set(range(2, 11))))
    print()
    print("\n".join(texts))
    if args.json:
        Path(args.json).write_text(json.dumps({"label": args.label, "runs": results}, indent=1))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description="perf profiles and flame graphs of keywarden-server and redis-server "
                    "under redis-benchmark", formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    add_server_arguments(parser)
    parser.add_argument("--out-dir", default="profiles", help="where the .svg and .folded go")
    parser.add_argument("--label", default="",
                        help="names keywarden's build in titles and file names, e.g. after")
    parser.add_argument("--baseline", help="a second keywarden-server build (e.g. the one "
                        "before a change), profiled in the same run")
    parser.add_argument("--baseline-label", default="before")
    parser.add_argument("--servers", default="keywarden,redis",
                        type=lambda s: [x for x in s.split(",") if x])
    parser.add_argument("--tests", default=",".join(TESTS), type=lambda s: s.split(","))
    parser.add_argument("--pipelines", default="1,16",
                        type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--requests", type=int, default=0,
                        help="-n per load (default: 200,000 at P1, 2,000,000 otherwise)")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--keyspace", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true", help="tiny loads: a smoke run")
    parser.add_argument("--frequency", type=int, default=997, help="perf -F")
    parser.add_argument("--call-graph", choices=("dwarf", "fp"), default="dwarf")
    parser.add_argument("--min-share", type=float, default=0.002,
                        help="frames below this share of samples are left out of the SVG")
    parser.add_argument("--attach-delay", type=float, default=0.5)
    parser.add_argument("--run-timeout", type=float, default=300)
    parser.add_argument("--perf", default=PERF)
    parser.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark")
                        or "/usr/bin/redis-benchmark")
    parser.add_argument("--keep-data", action="store_true", help="keep the perf.data files")
    parser.add_argument("--json", help="write runs and summaries here")
    parser.add_argument("--fold-only", metavar="PERF_SCRIPT_TXT",
                        help="no runs: fold this `perf script` output (or '-' for stdin)")
    parser.add_argument("--svg", help="with --fold-only: write the flame graph here")
    parser.add_argument("--own-dso", action="append", default=[],
                        help="with --fold-only: a DSO that counts as the server's own code")
    args = parser.parse_args()
    resolve_server_arguments(args)
    args.keywarden = os.path.abspath(args.keywarden)  # the servers run in their own directories
    if args.fold_only:
        source = sys.stdin if args.fold_only == "-" else open(args.fold_only, errors="replace")
        with source:
            folded = fold_perf_script(source)
        own = tuple(args.own_dso)
        print(summary_text(args.fold_only, summarize(folded, own)))
        if args.svg:
            Path(args.svg).write_text(render_svg(folded, args.fold_only, own, args.min_share))
        return 0
    for tool in (args.perf, args.redis_benchmark):
        if not shutil.which(tool) and not os.path.exists(tool):
            sys.exit(f"{tool} is not there")
    return run_profiles(args)


if __name__ == "__main__":
    sys.exit(main())
