"""Smoke test of bench/profile_request_path.py's own code: folding `perf script` output into
stacks, the summary, and the flame-graph SVG, fed a canned excerpt in the format `perf script`
prints for a `perf record --call-graph dwarf` of a server (no perf run, no server).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import xml.etree.ElementTree as ET

from conftest import REPO_ROOT

BENCH = REPO_ROOT / "bench" / "profile_request_path.py"
_spec = importlib.util.spec_from_file_location("profile_request_path", BENCH)
profile = importlib.util.module_from_spec(_spec)
sys.path.insert(0, str(BENCH.parent))
_spec.loader.exec_module(profile)

OWN = ("/opt/kw/keywarden-server",)

# Four samples of the main thread: a send() in the kernel, a key lookup in our code, a libc
# memcmp called from it, and a broken unwind (garbage frames above the vDSO) that must lose
# its [unknown] frames. Leaf first, as perf prints them.
PERF_SCRIPT = """\
keywarden-serve 4242/4242 21035.917614:    1003009 cpu-clock:
\tffffffff8207e2b4 __tcp_transmit_skb+0xac4 ([kernel.kallsyms])
\tffffffff8206652b tcp_sendmsg+0x2b ([kernel.kallsyms])
\tffffffff81000130 entry_SYSCALL_64_after_hwframe+0x76 ([kernel.kallsyms])
\t           f838f __send+0x4f (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t           f838f __send+0x4f (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t          2a1b40 keywarden::Connection::flush()+0x20 (/opt/kw/keywarden-server)
\t          2a0000 keywarden::EventLoop::run(std::chrono::duration<long, std::ratio<1l, 1000l> >)+0x99 (/opt/kw/keywarden-server)
\t           61215 main+0x315 (/opt/kw/keywarden-server)

keywarden-serve 4242/4242 21035.918614:    1003009 cpu-clock:
\t          1b2c3d keywarden::Database::lookup(std::basic_string_view<char, std::char_traits<char> >) const+0x1d (/opt/kw/keywarden-server)
\t          2a0000 keywarden::EventLoop::run(std::chrono::duration<long, std::ratio<1l, 1000l> >)+0x99 (/opt/kw/keywarden-server)
\t           61215 main+0x315 (/opt/kw/keywarden-server)

keywarden-serve 4242/4242 21035.919614:    1003009 cpu-clock:
\t          1d5e0 __memcmp_evex_movbe+0x40 (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t          1b2c3d keywarden::Database::lookup(std::basic_string_view<char, std::char_traits<char> >) const+0x1d (/opt/kw/keywarden-server)
\t          2a0000 keywarden::EventLoop::run(std::chrono::duration<long, std::ratio<1l, 1000l> >)+0x99 (/opt/kw/keywarden-server)
\t           61215 main+0x315 (/opt/kw/keywarden-server)

keywarden-serve 4242/4242 21035.920614:    1003009 cpu-clock:
\t             7bd [unknown] ([vdso])
\t    555bf5864016 [unknown] ([unknown])
\t61765f6d61726170 [unknown] ([unknown])
"""

LOOKUP = "keywarden::Database::lookup [keywarden-server]"
ROOT = "keywarden-serve [thread];main [keywarden-server];keywarden::EventLoop::run [keywarden-server]"


def test_shorten_symbol():
    assert profile.shorten_symbol("aeMain+0x1c") == "aeMain"
    assert profile.shorten_symbol(
        "keywarden::siphash<keywarden::Key>(std::basic_string_view<char>, unsigned long)+0x3") \
        == "keywarden::siphash<…>"
    assert profile.shorten_symbol("keywarden::(anonymous namespace)::get_command(keywarden::"
                                  "CommandContext&)") == "keywarden::(anonymous namespace)::get_command"


def test_fold_perf_script():
    folded = profile.fold_perf_script(PERF_SCRIPT.splitlines(keepends=True))
    assert folded == {
        ROOT + ";keywarden::Connection::flush [keywarden-server];__send [libc.so.6]"
        ";entry_SYSCALL_64_after_hwframe [kernel];tcp_sendmsg [kernel]"
        ";__tcp_transmit_skb [kernel]": 1,
        ROOT + ";" + LOOKUP: 1,
        ROOT + ";" + LOOKUP + ";__memcmp_evex_movbe [libc.so.6]": 1,
        "keywarden-serve [thread];? [vdso]": 1,
    }
    # the folded text reads back to the same stacks
    assert profile.read_folded(profile.write_folded(folded)) == folded


def test_summary():
    folded = profile.fold_perf_script(PERF_SCRIPT.splitlines(keepends=True))
    s = profile.summarize(folded, OWN)
    assert s["samples"] == 4
    assert s["kernel"] == 0.25 and s["user"] == 0.75
    assert s["syscalls"] == 0.25
    assert s["own_self"] == 0.25
    assert s["top_self"][0][1] == 0.25
    assert dict(s["top_inclusive"])[LOOKUP] == 0.5
    # main is on three of four stacks: kept; the thread root is on all of them: left out
    assert "keywarden-serve [thread]" not in dict(s["top_inclusive"])
    text = profile.summary_text("canned", s)
    assert "kernel 25.0 %" in text and LOOKUP in text


def test_svg():
    folded = profile.fold_perf_script(PERF_SCRIPT.splitlines(keepends=True))
    # a 996-sample stack next to them: the canned thread's four samples (0.4 %) fall under a
    # 0.5 % threshold, so only the big stack's frames (and the root) are drawn
    folded["other [thread];busy [keywarden-server]"] = 996
    svg = profile.render_svg(folded, "canned <test>", OWN, min_share=0.005, width=1010)
    tree = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    titles = [t.text for t in tree.iter(f"{ns}title")]
    assert titles == ["all — 1,000 samples, 100.00 %",
                      "other [thread] — 996 samples, 99.60 %",
                      "busy [keywarden-server] — 996 samples, 99.60 %"]
    # width ∝ samples: the root spans the drawing (1,010 − 2 × 10 margin = 990 px, less the
    # half-pixel gap), the 996-sample frame 99.6 % of it; our own code is green
    rects = [g.find(f"{ns}rect") for g in tree.iter(f"{ns}g")]
    assert abs(float(rects[0].get("width")) - 989.5) < 0.01
    assert abs(float(rects[2].get("width")) - (990 * 0.996 - 0.5)) < 0.01
    red, green, blue = (int(v) for v in rects[2].get("fill")[4:-1].split(","))
    assert green > red and green > blue
    assert "canned &lt;test&gt;" in svg

    # with no threshold every frame is drawn, children inside their parent's span
    svg = profile.render_svg(folded, "all", OWN, min_share=0)
    tree = ET.fromstring(svg)
    # all; 2 threads; main and the vDSO frame; run; flush and lookup; the 4 frames of the
    # send; memcmp; busy
    assert len(list(tree.iter(f"{ns}g"))) == 1 + 2 + 2 + 1 + 2 + 4 + 1 + 1


def test_fold_only_command_line(tmp_path):
    source = tmp_path / "perf.txt"
    source.write_text(PERF_SCRIPT)
    out = subprocess.run([sys.executable, str(BENCH), "--fold-only", str(source), "--own-dso",
                          "keywarden-server", "--svg", str(tmp_path / "out.svg")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "4 samples; kernel 25.0 %" in out.stdout
    ET.parse(tmp_path / "out.svg")
