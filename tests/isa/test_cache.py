"""The on-disk cache of parsed modules (issue #15, start-up): keyed by content and code, safe
against damaged entries and concurrent writers, off on request."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import isa
from isa import cache

ROOT = Path(__file__).resolve().parents[2]
SRC = (ROOT / "examples" / "ptx" / "hgemm_wmma.sm_90.ptx").read_text()


@pytest.fixture
def kc(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNLENS_CACHE", str(tmp_path))
    monkeypatch.delenv("KERNLENS_NO_CACHE", raising=False)
    return tmp_path


def entries(kc: Path) -> list[Path]:
    d = kc / "module"
    return sorted(d.glob("*.pickle")) if d.exists() else []


def parses(monkeypatch) -> list[str]:
    """Count the front end's parses from now on (a cache hit does not parse)."""
    import isa.ptx.parser as parser

    seen: list[str] = []
    real = parser.parse

    def counting(text, file="<text>", **kw):
        seen.append(file)
        return real(text, file, **kw)

    monkeypatch.setattr(parser, "parse", counting)
    return seen


def test_a_second_load_comes_from_the_cache_and_equals_the_parse(kc, monkeypatch):
    seen = parses(monkeypatch)
    first = isa.loads(SRC, "k.ptx")
    assert seen == ["k.ptx"] and len(entries(kc)) == 1
    second = isa.loads(SRC, "k.ptx")
    assert seen == ["k.ptx"]                      # not parsed again
    assert second == first and second is not first
    assert second.emit() == first.emit() and second.path == "k.ptx"


def test_a_changed_text_or_name_or_option_is_a_new_key(kc, monkeypatch):
    seen = parses(monkeypatch)
    isa.loads(SRC, "k.ptx")
    changed = SRC.replace("ret;", "// edited\n\tret;", 1)
    assert changed != SRC
    m = isa.loads(changed, "k.ptx")
    assert "// edited" in m.source and len(seen) == 2
    isa.loads(SRC, "other.ptx")                  # spans name the file: another key
    isa.loads(SRC, "k.ptx", lenient=True)
    assert len(seen) == 4 and len(entries(kc)) == 4
    assert isa.loads(SRC, "other.ptx").path == "other.ptx" and len(seen) == 4


def test_a_file_edited_on_disk_is_parsed_again(kc, tmp_path, monkeypatch):
    seen = parses(monkeypatch)
    f = tmp_path / "k.ptx"
    f.write_text(SRC)
    n1 = len(isa.load(f).functions[0].instructions)
    f.write_text(SRC.replace("ret;", "mov.u32 %r1, %r1;\n\tret;", 1))
    n2 = len(isa.load(f).functions[0].instructions)
    assert n2 == n1 + 1 and len(seen) == 2
    assert len(isa.load(f).functions[0].instructions) == n2 and len(seen) == 2


def test_a_change_to_the_front_end_code_is_a_new_key(kc, monkeypatch):
    seen = parses(monkeypatch)
    isa.loads(SRC, "k.ptx")
    monkeypatch.setattr(cache, "code_version", lambda *pkgs: "0.1.0-another-build")
    isa.loads(SRC, "k.ptx")
    assert len(seen) == 2 and len(entries(kc)) == 2


def test_the_code_version_follows_every_source_file(tmp_path):
    v = cache.code_version("isa")
    assert v.startswith(__import__("kernlens").__version__ + "-") and v == cache.code_version("isa")
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text("x = 1\n")
    (pkg / "sub" / "g.lark").write_text("start: 'a'\n")
    d0 = cache.tree_digest(tmp_path, ["pkg"])
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"bytecode")
    assert cache.tree_digest(tmp_path, ["pkg"]) == d0          # bytecode is not source
    st = (pkg / "sub" / "g.lark").stat()
    os.utime(pkg / "sub" / "g.lark", ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    d1 = cache.tree_digest(tmp_path, ["pkg"])
    assert d1 != d0                                             # touched
    (pkg / "a.py").write_text("x = 22\n")
    d2 = cache.tree_digest(tmp_path, ["pkg"])
    assert d2 not in (d0, d1)                                   # edited
    (pkg / "b.py").write_text("")
    assert cache.tree_digest(tmp_path, ["pkg"]) not in (d0, d1, d2)   # a new file


def _walk_digest(top, packages) -> str:
    """tree_digest as it was written with os.walk (the reference its os.scandir walk keeps to)."""
    h = cache.blake2b(digest_size=16)
    for pkg in packages:
        for dirpath, dirnames, filenames in os.walk(top / pkg):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            rel = os.path.relpath(dirpath, top)
            for name in sorted(filenames):
                if name.endswith((".pyc", ".pyo")):
                    continue
                st = os.stat(os.path.join(dirpath, name))
                h.update(f"{rel}/{name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def test_the_code_digest_is_that_of_a_sorted_walk(tmp_path):
    """Same digest as os.walk's sorted top-down walk (so keys written before stay valid): on the
    packages' real trees and on one with nested folders, names that sort across case and
    punctuation, bytecode, and a linked folder (listed, not entered) and file."""
    assert cache.tree_digest(ROOT, ["isa", "sim", "analyzer"]) == _walk_digest(ROOT, ["isa", "sim", "analyzer"])
    pkg = tmp_path / "pkg"
    for d in ("a", "a_b", "B", "a/z", "a/z/deep", "__pycache__", "a/__pycache__"):
        (pkg / d).mkdir(parents=True, exist_ok=True)
    for f in ("a.py", "A.py", "a_b.py", "a/z/deep/x.lark", "a/z/y.py", "a/m.pyc", "__pycache__/q.py", "B/k.toml"):
        (pkg / f).write_text(f)
    (pkg / "link_dir").symlink_to(pkg / "a")
    (pkg / "link.py").symlink_to(pkg / "a.py")
    assert cache.tree_digest(tmp_path, ["pkg"]) == _walk_digest(tmp_path, ["pkg"])


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_a_damaged_entry_is_a_miss_and_is_replaced(kc, monkeypatch, damage):
    want = isa.loads(SRC, "k.ptx")
    (entry,) = entries(kc)
    data = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(data[: len(data) // 2])
    elif damage == "flip":                       # one bit inside the pickle: the digest catches it
        i = len(data) - 100
        entry.write_bytes(data[:i] + bytes([data[i] ^ 0x10]) + data[i + 1:])
    elif damage == "garbage":
        entry.write_bytes(b"not a cache entry at all")
    else:
        entry.write_bytes(b"")
    seen = parses(monkeypatch)
    got = isa.loads(SRC, "k.ptx")
    assert got == want and seen == ["k.ptx"]     # parsed again, right result
    assert entry.read_bytes() == data            # and stored whole again


def test_warnings_of_a_lenient_parse_come_back_with_the_cached_module(kc):
    src = SRC.replace("ret;", "frobnicate.u32 %r1, %r1;\n\tret;", 1)
    d1: list = []
    isa.loads(src, "k.ptx", lenient=True, diagnostics=d1)
    d2: list = []
    isa.loads(src, "k.ptx", lenient=True, diagnostics=d2)
    assert d1 and [str(d) for d in d2] == [str(d) for d in d1]


def test_a_text_that_does_not_parse_is_not_cached(kc):
    bad = SRC.replace("ret;", "add.u32 %r1, ;\n\tret;", 1)
    for _ in range(2):
        with pytest.raises(isa.ParseError):
            isa.loads(bad, "k.ptx")
    assert entries(kc) == []


def test_no_cache_reads_and_writes_nothing(kc, monkeypatch):
    monkeypatch.setenv("KERNLENS_NO_CACHE", "1")
    seen = parses(monkeypatch)
    isa.loads(SRC, "k.ptx")
    isa.loads(SRC, "k.ptx")
    assert len(seen) == 2 and not (kc / "module").exists() and cache.root() is None


def test_the_kernlens_no_cache_option_turns_it_off(kc, tmp_path):
    f = tmp_path / "k.ptx"
    f.write_text(SRC)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "kernlens.cli", "--no-cache", "fmt", str(f)], env=env,
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert not (kc / "module").exists()
    out = subprocess.run([sys.executable, "-m", "kernlens.cli", "fmt", str(f)], env=env,
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert len(entries(kc)) == 1


@pytest.mark.parametrize("xdg", [None, "", "/x/cache", "/x/cache/", "rel/cache", "~/c", "//x"])
@pytest.mark.parametrize("home", [None, "/home/u", "/home/u/", "/", "//h", "rel/home", ""])
@pytest.mark.parametrize("android", [False, True])
def test_the_default_folder_is_platformdirs_user_cache_dir(monkeypatch, xdg, home, android):
    """isa.cache.user_cache_dir (no platformdirs import where the answer is plain) gives what
    platformdirs gives, for set, empty, relative and trailing-slash XDG_CACHE_HOME and HOME."""
    from platformdirs import user_cache_dir

    for var, value in (("XDG_CACHE_HOME", xdg), ("HOME", home)):
        if value is None:
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, value)
    monkeypatch.delenv("SHELL", raising=False)
    monkeypatch.delenv("PREFIX", raising=False)
    if android:
        monkeypatch.setenv("ANDROID_DATA", "/data")
        monkeypatch.setenv("ANDROID_ROOT", "/system")
    try:
        expected = user_cache_dir("kernlens", appauthor=False)
    except RuntimeError as exc:                 # no home platformdirs can find: the same error
        with pytest.raises(RuntimeError, match=str(exc)[:20]):
            cache.user_cache_dir()
        return
    assert cache.user_cache_dir() == expected


def test_concurrent_writers_leave_one_whole_entry(kc):
    """Four processes parse and store the same text at once: every one gets the right module and
    the folder holds one whole entry, no temporary file."""
    code = ("import sys, isa; m = isa.loads(open(sys.argv[1]).read(), 'k.ptx'); "
            "print(len(m.functions[0].instructions))")
    f = kc / "src.ptx"
    f.write_text(SRC)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    procs = [subprocess.Popen([sys.executable, "-c", code, str(f)], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(4)]
    outs = [p.communicate()[0].strip() for p in procs]
    n = str(len(isa.loads(SRC, "k.ptx").functions[0].instructions))
    assert outs == [n] * 4 and all(p.returncode == 0 for p in procs)
    assert len(entries(kc)) == 1 and not list((kc / "module").glob(".tmp-*"))
    assert cache.load("module", entries(kc)[0].stem)[0] == isa.loads(SRC, "k.ptx")


def test_the_folder_is_kept_under_its_size_limit(kc, monkeypatch):
    monkeypatch.setenv("KERNLENS_CACHE_MB", "0.25")   # each entry here is ~0.1 MB
    for i in range(6):
        assert cache.store("module", f"e{i}", b"x" * 100_000)
        os.utime(kc / "module" / f"e{i}.pickle", (1_000_000 + i, 1_000_000 + i))
    cache.store("module", "last", b"y" * 100_000)
    left = sorted(p.stem for p in (kc / "module").glob("*.pickle"))
    assert "last" in left and len(left) == 2          # the least recently used went first
    assert cache.load("module", "last") == b"y" * 100_000


def test_machine_tables_come_from_the_cache_by_the_files_text(kc, tmp_path):
    import tomllib

    from sim import machines

    src = (ROOT / "sim" / "machines" / "h200.toml").read_text()
    f = tmp_path / "m.toml"
    f.write_text(src)
    machines._read.cache_clear()
    first = machines._read(f)
    assert first == tomllib.loads(src) and len(list((kc / "machine").glob("*.pickle"))) == 1
    machines._read.cache_clear()
    assert machines._read(f) == first                         # from the cache, the same tables
    f.write_text(src + "\n[extra]\nx = 1\n")
    machines._read.cache_clear()
    assert machines._read(f)["extra"] == {"x": 1}             # an edited file is read again
    f.write_text("not = [valid")
    machines._read.cache_clear()
    with pytest.raises(isa.InputError, match="not valid TOML"):
        machines._read(f)
    machines._read.cache_clear()


def test_cache_false_and_big_texts_leave_the_cache_alone(kc, monkeypatch):
    seen = parses(monkeypatch)
    isa.loads(SRC, "k.ptx", cache=False)
    isa.loads(SRC, "k.ptx", cache=False)
    assert len(seen) == 2 and entries(kc) == []
    monkeypatch.setattr(isa, "CACHE_MAX_BYTES", len(SRC) - 1)
    isa.loads(SRC, "k.ptx")
    assert len(seen) == 3 and entries(kc) == []
