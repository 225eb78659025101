"""libkeywarden as users get it: `cmake --install`, then find_package and pkg-config.

The client library is installed into a temporary prefix from the build tree that holds the
server under test (KEYWARDEN_SERVER is <build>/src/server/keywarden-server), so only the
packaged archive is (re)linked there, never the server; without such a tree, a client-only
tree is configured and built in a temporary directory. Then examples/shared_counter is
configured with find_package(keywarden CONFIG REQUIRED) against that prefix, three of its
processes increment one counter at once on keywarden-server, and no update may be lost. A
one-file program built with `pkg-config --cflags --libs keywarden` must work too.

Skipped only when cmake is not installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO_ROOT, keywarden_binary

EXAMPLE_DIR = REPO_ROOT / "examples" / "shared_counter"
BUILD_TIMEOUT = 600
PROCESSES = 3
INCREMENTS = 200

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")


def _run(argv, *, env=None, timeout=BUILD_TIMEOUT, cwd=None) -> str:
    result = subprocess.run([str(a) for a in argv], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=timeout, env=env,
                            cwd=cwd)
    assert result.returncode == 0, f"{' '.join(map(str, argv))} failed:\n{result.stdout[-6000:]}"
    return result.stdout


def _generator_args() -> list[str]:
    return ["-G", "Ninja"] if shutil.which("ninja") else []


def _server_build_tree() -> Path | None:
    """The CMake build tree of this source tree that produced the server under test."""
    try:
        tree = Path(keywarden_binary()).resolve().parents[2]
    except IndexError:
        return None
    cache = tree / "CMakeCache.txt"
    if not cache.is_file():
        return None
    for line in cache.read_text(errors="replace").splitlines():
        if line.startswith("CMAKE_HOME_DIRECTORY:"):
            home = line.split("=", 1)[1]
            if Path(home).resolve() == REPO_ROOT.resolve():
                return tree
    return None


@pytest.fixture(scope="module")
def prefix(tmp_path_factory) -> Path:
    """An install prefix holding libkeywarden, installed with `cmake --install`."""
    work = tmp_path_factory.mktemp("install")
    tree = _server_build_tree()
    if tree is None:
        tree = work / "build"
        _run(["cmake", "-S", REPO_ROOT, "-B", tree, *_generator_args(),
              "-DCMAKE_BUILD_TYPE=Release", "-DKEYWARDEN_TESTS=OFF"])
    # Only the packaged archive and what it is made of; the server is not rebuilt.
    _run(["cmake", "--build", tree, "--target", "keywarden_client", "-j2"])
    installed = work / "prefix"
    _run(["cmake", "--install", tree, "--prefix", installed])
    return installed


def _pkg_config_dir(prefix: Path) -> Path:
    found = sorted(prefix.glob("**/pkgconfig/keywarden.pc"))
    assert found, f"no keywarden.pc under {prefix}"
    return found[0].parent


def test_installed_layout(prefix):
    assert (prefix / "include" / "keywarden" / "keywarden.h").is_file()
    assert list(prefix.glob("**/libkeywarden_client.a")), "the library is not installed"
    assert list(prefix.glob("**/cmake/keywarden/keywardenConfig.cmake"))
    assert list(prefix.glob("**/cmake/keywarden/keywardenConfigVersion.cmake"))
    _pkg_config_dir(prefix)
    # Nothing of the server or the internal layers leaks into the installed tree.
    assert not list(prefix.glob("**/libkw_*.a"))
    assert not list(prefix.glob("**/keywarden-server"))


def test_shared_counter_example_with_find_package(prefix, keywarden, tmp_path):
    build = tmp_path / "example"
    _run(["cmake", "-S", EXAMPLE_DIR, "-B", build, *_generator_args(),
          f"-DCMAKE_PREFIX_PATH={prefix}"])
    _run(["cmake", "--build", build])
    program = build / "shared_counter"
    assert program.is_file()

    key = "install:shared_counter"
    processes = [
        subprocess.Popen([str(program), "--port", str(keywarden.port), "--key", key,
                          "--count", str(INCREMENTS)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for _ in range(PROCESSES)
    ]
    outputs = []
    for proc in processes:
        try:
            out, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            for p in processes:
                p.kill()
            pytest.fail("shared_counter did not finish within 60 s")
        outputs.append(out)
        assert proc.returncode == 0, f"shared_counter failed:\n{out}"
        assert out.startswith(f"done {INCREMENTS} lost "), out
    value = keywarden.client().get(key)
    assert value == str(PROCESSES * INCREMENTS).encode(), (value, outputs)


PKG_CONFIG_PROGRAM = r"""
// Built with `pkg-config --cflags --libs keywarden` only.
#include <keywarden/keywarden.h>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  keywarden::ClientOptions options;
  options.port = std::atoi(argv[1]);
  keywarden::Client client(options);
  client.command("SET", "install:pkg", 41);
  keywarden::Reply reply = client.command("INCR", "install:pkg");
  std::printf("%lld\n", static_cast<long long>(reply.integer()));
  return 0;
}
"""


def test_one_file_program_with_pkg_config(prefix, keywarden, tmp_path):
    if shutil.which("pkg-config") is None:
        pytest.skip("pkg-config is not installed")
    env = dict(os.environ, PKG_CONFIG_PATH=str(_pkg_config_dir(prefix)))
    flags = _run(["pkg-config", "--cflags", "--libs", "keywarden"], env=env).split()
    version = _run(["pkg-config", "--modversion", "keywarden"], env=env).strip()
    assert version and version[0].isdigit(), version
    source = tmp_path / "pkg.cc"
    source.write_text(PKG_CONFIG_PROGRAM)
    program = tmp_path / "pkg"
    compiler = os.environ.get("CXX") or shutil.which("c++") or "g++"
    # No -std=c++20 here: the .pc file's Cflags carry it.
    _run([compiler, source, "-o", program, *flags])
    out = _run([program, keywarden.port], timeout=30)
    assert out.strip() == "42"


SHARED_LIBRARY = r"""
// A user's shared library with libkeywarden linked into it (the archive must be PIC).
#include <keywarden/keywarden.h>

long long bump_counter(int port) {
  keywarden::ClientOptions options;
  options.port = port;
  keywarden::Client client(options);
  return client.command("INCR", "install:shared").integer();
}
"""

SHARED_MAIN = r"""
#include <cstdio>
#include <cstdlib>
long long bump_counter(int port);
int main(int argc, char** argv) {
  std::printf("%lld\n", bump_counter(std::atoi(argv[1])));
  return 0;
}
"""


def test_archive_links_into_a_shared_library(prefix, keywarden, tmp_path):
    if shutil.which("pkg-config") is None:
        pytest.skip("pkg-config is not installed")
    env = dict(os.environ, PKG_CONFIG_PATH=str(_pkg_config_dir(prefix)))
    flags = _run(["pkg-config", "--cflags", "--libs", "keywarden"], env=env).split()
    compiler = os.environ.get("CXX") or shutil.which("c++") or "g++"
    (tmp_path / "bump.cc").write_text(SHARED_LIBRARY)
    (tmp_path / "main.cc").write_text(SHARED_MAIN)
    library = tmp_path / "libbump.so"
    _run([compiler, "-shared", "-fPIC", tmp_path / "bump.cc", "-o", library, *flags])
    program = tmp_path / "main"
    # The .pc flags again: a sanitizer build's runtime must be linked into the program too.
    _run([compiler, tmp_path / "main.cc", "-o", program, f"-L{tmp_path}", "-lbump",
          f"-Wl,-rpath,{tmp_path}", *flags])
    keywarden.client().delete("install:shared")
    out = _run([program, keywarden.port], timeout=30)
    assert out.strip() == "1"
