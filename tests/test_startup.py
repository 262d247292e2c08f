"""Start-up (issue #15): a command imports what it runs and no more; the figures themselves are
``bench/startup.py``'s (tests never time things), these tests keep the heavy imports off the path.

Heavy and not needed by a PTX run without bf16/fp8 or by a one-file ``validate-kernel``: the
inspector (textual), networkx, ml_dtypes (~0.5 s of CPU to import), and, once the module is in
the on-disk cache, the parser (lark)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("textual", "tui", "networkx", "ml_dtypes", "lark", "lark_cython", "scipy", "dask", "pyarrow")
#: submodules of a package the command does need that it must not import: numpy.ma (~10 ms of CPU;
#: np.unique and np.percentile import it, sim.arrays does not); sim.ptx.tensormap where no argument
#: is a tensor map (~0.4 ms)
HEAVY_PARTS = ("numpy.ma", "sim.ptx.tensormap")
#: what a command needs only when the cache is empty: numpy.random (~12 ms of CPU) draws the
#: inputs, which the cache then holds; shutil
CACHED_AWAY = ("numpy.random",
               # (with bz2, lzma, zlib: Lark's import brings it; argparse asks it for the terminal's width,
               # kernlens.cli.Parser only where help text is laid out)
               "shutil",
               # the PTX front end (and its fast path's patterns, ~5 ms of CPU to compile): the cache
               # holds the parsed module
               "isa.ptx.parser", "isa.ptx.fastpath", "isa.lark_errors")

PROBE = """
import contextlib, io, json, sys
from importlib import import_module
main = import_module(sys.argv[1]).main
with contextlib.redirect_stdout(io.StringIO()):
    rc = main(sys.argv[2:])
print(json.dumps([rc, sorted(sys.modules)]))
"""


def imported(tmp_path, module: str, *argv: str) -> tuple[int, set[str]]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), KERNLENS_CACHE=str(tmp_path / "cache"))
    env.pop("KERNLENS_NO_CACHE", None)
    out = subprocess.run([sys.executable, "-c", PROBE, module, *argv], env=env, cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rc, mods = json.loads(out.stdout.strip().splitlines()[-1])
    return rc, {m.split(".")[0] for m in mods} | {m for m in mods if m in HEAVY_PARTS + CACHED_AWAY}


@pytest.mark.parametrize("module,argv", [
    ("kernlens.cli", ["run", "examples/ptx/dot_dp4a.sm_90.ptx", "--launch", "examples/manifest.json#dot_dp4a"]),
    ("analyzer.cli", ["examples/ptx/hgemm_wmma.sm_90.ptx"]),
])
def test_a_run_and_a_validation_import_nothing_heavy(tmp_path, module, argv):
    rc, first = imported(tmp_path, module, *argv)
    assert rc == 0 and "lark" in first and "isa.ptx.fastpath" in first    # an empty cache: parsed
    assert not first & (set(HEAVY) - {"lark", "lark_cython"}), first & set(HEAVY)
    assert not first & set(HEAVY_PARTS), first & set(HEAVY_PARTS)
    rc, second = imported(tmp_path, module, *argv)
    cached_away = set(HEAVY + HEAVY_PARTS + CACHED_AWAY)
    assert rc == 0 and not second & cached_away, second & cached_away   # from the cache: no parser, no draws
    assert "numpy" in second and "isa" in second


@pytest.mark.parametrize("module,argv", [
    ("kernlens.cli", ["run", "examples/ptx/dot_dp4a.sm_90.ptx", "--launch", "examples/manifest.json#dot_dp4a"]),
    ("analyzer.cli", ["examples/ptx/hgemm_wmma.sm_90.ptx"]),
])
def test_a_cached_run_or_validation_imports_no_pathlib(tmp_path, module, argv):
    """With the module, inputs and machine model in the cache, a PTX run and a validation open
    their files by name (kernlens.paths gives pathlib's names: ~3 ms of CPU for pathlib's import);
    the manifest's reference beside it is found as before."""
    for _ in range(2):                                           # the cache empty, then warm
        rc, mods = imported(tmp_path, module, *argv)
        assert rc == 0
    assert "pathlib" not in mods, "pathlib"


@pytest.mark.parametrize("module,argv", [
    ("kernlens.cli", ["run", "examples/ptx/dot_dp4a.sm_90.ptx", "--launch", "examples/manifest.json#dot_dp4a"]),
    ("analyzer.cli", ["examples/ptx/hgemm_wmma.sm_90.ptx"]),
])
def test_a_parse_imports_no_pathlib(tmp_path, module, argv):
    """With an empty cache the PTX front end parses (Lark's tables from the copy beside the
    grammar) and still imports no pathlib (isa.ptx.parser keeps its paths as text)."""
    rc, mods = imported(tmp_path, module, *argv)
    assert rc == 0 and "isa.ptx.parser" in mods            # parsed, not from the cache
    assert "pathlib" not in mods, "pathlib"


def test_a_run_in_the_default_cache_folder_imports_no_platformdirs(tmp_path):
    """Without KERNLENS_CACHE the folder is the user cache folder: on Linux with an absolute HOME
    isa.cache finds it as platformdirs does without importing platformdirs, nor the pathlib that
    platformdirs imports (~8 ms of CPU at every start); the cache is used there (a second run
    parses nothing)."""
    env = {k: v for k, v in os.environ.items() if k not in ("KERNLENS_CACHE", "KERNLENS_NO_CACHE", "XDG_CACHE_HOME")}
    env.update(PYTHONPATH=str(ROOT), HOME=str(tmp_path))
    argv = ["run", "examples/ptx/dot_dp4a.sm_90.ptx", "--launch", "examples/manifest.json#dot_dp4a"]
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", PROBE, "kernlens.cli", *argv], env=env, cwd=ROOT,
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        rc, mods = json.loads(out.stdout.strip().splitlines()[-1])
        assert rc == 0
    assert (tmp_path / ".cache" / "kernlens" / "module").is_dir()
    assert not {"platformdirs", "pathlib", "isa.ptx.parser"} & set(mods), {"platformdirs", "pathlib"} & set(mods)


MALLOC_PROBE = """
import resource, sys
import numpy as np
from kernlens.cli import settled_malloc
settled = settled_malloc() if sys.argv[1] == "settled" else None
faults = []
for _ in range(5):                       # a 1 MiB array made, filled and dropped, five times
    f = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    a = np.empty(1 << 17)
    a.fill(1.0)
    del a
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f)
print(settled, sum(faults[1:]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or not os.confstr("CS_GNU_LIBC_VERSION"),
                    reason="glibc's malloc only")
def test_the_program_settles_glibc_s_malloc_so_a_freed_array_s_pages_are_reused():
    """kernlens.cli.settled_malloc: glibc's mmap and trim thresholds where its dynamic rule ends,
    so that a new process reuses the pages of a freed megabyte-sized array as a process that has
    run a launch does, instead of unmapping them and faulting fresh ones in (page faults counted,
    not timed). Without it, the first free raises the threshold, the second array comes from a
    freshly grown heap (256 pages faulted again); with it only the first array faults."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    got = {}
    for mode in ("default", "settled"):
        out = subprocess.run([sys.executable, "-c", MALLOC_PROBE, mode], env=env, cwd=ROOT,
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        flag, faults = out.stdout.split()
        got[mode] = (flag, int(faults))
    assert got["settled"][0] == "True"
    assert got["default"][1] >= 200, got           # the glibc default: pages faulted anew
    assert got["settled"][1] < 64, got             # settled: the freed pages reused


HUGE_PROBE = """
import resource, sys
import numpy as np
from kernlens.cli import settled_malloc
settled = settled_malloc() if sys.argv[1] == "settled" else None
marked = 0                               # bytes of the heap marked for huge pages (VmFlags hg)
with open("/proc/self/smaps") as fh:
    vma = None
    for line in fh:
        if line[:1] in "0123456789abcdef" and "-" in line.split()[0]:
            vma = line.split()
        elif line.startswith("VmFlags:") and vma[-1] == "[heap]" and " hg" in line:
            lo, hi = (int(x, 16) for x in vma[0].split("-"))
            marked += hi - lo
f = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
keep = [np.ones(1 << 17) for _ in range(16)]      # 16 arrays of 1 MiB, filled and kept
print(settled, marked, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f)
"""


def _thp_mode() -> str | None:
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as fh:
            return fh.read().split("[", 1)[1].split("]", 1)[0]
    except (OSError, IndexError):
        return None


@pytest.mark.skipif(not sys.platform.startswith("linux") or not os.confstr("CS_GNU_LIBC_VERSION")
                    or _thp_mode() is None, reason="glibc's malloc and Linux's transparent huge pages only")
def test_the_program_marks_its_heap_for_huge_pages_so_a_first_launch_faults_megabytes_at_once():
    """kernlens.cli.huge_heap (from settled_malloc): the heap grown by its 32 MiB top padding at
    once, that stretch marked MADV_HUGEPAGE (smaps: VmFlags hg), so that 16 MiB of fresh arrays
    fault in 2 MiB pages where the system allows them: a few hundred faults instead of 4,096."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    got = {}
    for mode in ("default", "settled"):
        out = subprocess.run([sys.executable, "-c", HUGE_PROBE, mode], env=env, cwd=ROOT,
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        flag, marked, faults = out.stdout.split()
        got[mode] = (flag, int(marked), int(faults))
    assert got["default"][1] == 0 and got["default"][2] >= 4096, got
    assert got["settled"][0] == "True" and got["settled"][1] >= 28 << 20, got
    if _thp_mode() != "never":
        assert got["settled"][2] < 1024, got        # (the stretch below its first 2 MiB boundary: 4 KiB pages)


def test_the_program_settles_malloc_before_it_imports_its_command(monkeypatch):
    """entry() settles malloc first: numpy and the command's modules allocate after it."""
    import kernlens.cli as cli

    calls = []
    monkeypatch.setattr(cli, "settled_malloc", lambda: calls.append("malloc"))
    monkeypatch.setattr(cli, "import_paused", lambda module: calls.append(module))
    monkeypatch.setattr(cli, "main", lambda: calls.append("main") or 0)
    monkeypatch.setattr(cli, "exit_now", lambda rc: calls.append(("exit", rc)))
    monkeypatch.setattr(sys, "argv", ["kernlens", "run", "x.ptx"])
    cli.entry()
    assert calls == ["malloc", "sim.cli", "main", ("exit", 0)]


def test_a_timed_run_imports_no_numpy_ma(tmp_path):
    """The timing model's sector counts (sim.timing.streams) and the race reports (sim.ptx.order)
    take sim.arrays.distinct, not np.unique, which imports numpy.ma."""
    argv = [*RUN, "--timing", "h200"]
    for _ in range(2):                                           # the cache empty, then warm
        rc, mods = imported(tmp_path, "kernlens.cli", *argv)
        assert rc == 0 and "numpy.ma" not in mods and "sim" in mods


def test_a_timed_run_reads_its_sass_listing_s_ir_from_the_cache(tmp_path, monkeypatch):
    """With ptxas at hand a timed run reads the SASS listing (ptxas's merged shared loads): parsed
    once (isa.sass.parser, Lark), then from the on-disk cache, the same IR, with no Lark import."""
    import isa
    import isa.sass

    if not isa.sass.available():
        pytest.skip(isa.sass.note() or "ptxas/nvdisasm not installed")
    argv = [*RUN, "--timing", "h200"]
    rc, first = imported(tmp_path, "kernlens.cli", *argv)
    assert rc == 0 and "lark" in first
    (entry,) = (tmp_path / "cache" / "sass-module").glob("*.pickle")
    rc, second = imported(tmp_path, "kernlens.cli", *argv)
    assert rc == 0 and "lark" not in second
    monkeypatch.setenv("KERNLENS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("KERNLENS_NO_CACHE", raising=False)
    module = isa.load(ROOT / RUN[1])
    listing = isa.sass.listing(module, use_cache=False)       # compiled and parsed again, no cache
    from isa.sass.parser import parse

    assert isa.sass.parse_listing(listing.compiled.listing, "x.sass", listing.compiled.target) == \
        parse(listing.compiled.listing, "x.sass", listing.compiled.target)
    assert listing.module == isa.sass.listing(isa.load(ROOT / RUN[1])).module      # this one from the cache


def test_a_bf16_launch_imports_ml_dtypes_and_runs(tmp_path):
    from tests.conftest import corpus_or_skip

    corpus = corpus_or_skip()
    rc, mods = imported(tmp_path, "kernlens.cli", "run", str(corpus / "ptx" / "bf16_smem_gemm.sm_90.ptx"),
                        "--launch", f"{corpus / 'manifest.json'}#bf16_gemm_smem_tiled")
    assert rc == 0 and "ml_dtypes" in mods


def test_the_command_line_still_knows_every_command(capsys, monkeypatch):
    from kernlens.cli import SUBCOMMANDS, main

    monkeypatch.setenv("KERNLENS_NO_CACHE", "")     # --no-cache sets it: recorded here, so undone after the test
    monkeypatch.delenv("KERNLENS_NO_CACHE")

    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(name in out for name in SUBCOMMANDS)
    assert main(["--no-cache", "fmt", str(ROOT / "examples" / "ptx" / "dot_dp4a.sm_90.ptx")]) == 0
    assert ".entry dot_dp4a" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["frobnicate"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'frobnicate'" in err and "run" in err and "inspect" in err


def test_the_program_exits_quickly_with_its_code_and_its_whole_output(tmp_path):
    """``python -m kernlens.cli`` ends through exit_now (no interpreter teardown): the exit code
    and every line of a long output still arrive, and atexit handlers run."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), KERNLENS_CACHE=str(tmp_path))
    ptx = ROOT / "examples" / "ptx" / "dot_dp4a.sm_90.ptx"
    out = subprocess.run([sys.executable, "-m", "kernlens.cli", "fmt", str(ptx)], env=env, capture_output=True,
                         text=True)
    assert out.returncode == 0 and out.stdout.rstrip().endswith("}")
    assert out.stdout.count("\n") > 20
    out = subprocess.run([sys.executable, "-m", "kernlens.cli", "fmt", str(tmp_path / "missing.ptx")], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 2 and "no such file" in out.stderr
    code = ("import atexit, sys; from kernlens.cli import exit_now; "
            "atexit.register(lambda: print('atexit ran')); print('x' * 100000); exit_now(3)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 3 and out.stdout == "x" * 100000 + "\natexit ran\n"


BLAS_PROBE = """
import json, os, sys
import {module}
import numpy
print(json.dumps(os.environ.get("OPENBLAS_NUM_THREADS")))
"""


@pytest.mark.parametrize("module", ["kernlens.cli", "analyzer.cli"])
@pytest.mark.parametrize("chosen, expected", [({}, "1"), ({"OMP_NUM_THREADS": "3"}, None),
                                              ({"OPENBLAS_NUM_THREADS": "2"}, "2")])
def test_an_entry_point_asks_openblas_for_one_thread_unless_the_user_chose(module, chosen, expected):
    """OpenBLAS's threads start (and spin) at numpy's import; the simulator never calls BLAS."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")}
    env.update(chosen, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", BLAS_PROBE.format(module=module)], env=env, cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == expected


def test_the_bench_s_run_imports_are_what_a_run_imports(tmp_path):
    """bench/startup.py prints the CPU of importing RUN_IMPORTS as the part of a cold run no cache
    removes: each of them is imported by a PTX run."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import startup
    finally:
        sys.path.remove(str(ROOT / "bench"))
    wanted = {m.strip() for m in startup.RUN_IMPORTS.removeprefix("import ").split(",")}
    env = dict(os.environ, PYTHONPATH=str(ROOT), KERNLENS_CACHE=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", PROBE, "kernlens.cli", "run", "examples/ptx/dot_dp4a.sm_90.ptx",
                          "--launch", "examples/manifest.json#dot_dp4a"], env=env, cwd=ROOT, capture_output=True,
                         text=True)
    rc, mods = json.loads(out.stdout.strip().splitlines()[-1])
    assert rc == 0 and wanted <= set(mods), wanted - set(mods)


# ----------------------------------------------------------------------------------------------
# dataclass methods' code from the cache (isa.dataclass_code)
# ----------------------------------------------------------------------------------------------

COMPILES = """
import contextlib, importlib.util, io, json, sys
from pathlib import Path
# isa.dataclass_code with its copy beside the code moved to a test folder: loaded before isa, which
# then finds it among the modules
spec = importlib.util.spec_from_file_location("isa.dataclass_code", sys.argv[1])
dc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(dc)
dc.INSTALLED = Path(sys.argv[2])
sys.modules["isa.dataclass_code"] = dc
texts = []
sys.addaudithook(lambda event, args: texts.append(args[0]) if event == "compile" else None)
from kernlens.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    rc = main(sys.argv[3:])
created = [t for t in texts if isinstance(t, (bytes, str)) and
           (t.encode() if isinstance(t, str) else bytes(t)).startswith(b"def __create_fn__")]
print(json.dumps([rc, len(created), dc.compiled]))
"""


def dataclass_compiles(cache: Path, installed: Path, *argv: str, off: bool = False) -> tuple[int, int, int]:
    """(exit code, texts of dataclass methods compiled, those of kernlens's classes) of one command
    in a fresh process, with the user cache ``cache`` and the copy beside isa/dataclass_code.py in
    ``installed``. The first count is the interpreter's (audit events: ``exec`` of a text raises
    ``compile``), the second isa.dataclass_code's (a parse imports Lark, whose classes are not ours)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), KERNLENS_CACHE=str(cache))
    env.pop("KERNLENS_NO_CACHE", None)
    if off:
        env["KERNLENS_NO_CACHE"] = "1"
    out = subprocess.run([sys.executable, "-c", COMPILES, str(ROOT / "isa" / "dataclass_code.py"), str(installed),
                          *argv], env=env, cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rc, n, ours = json.loads(out.stdout.strip().splitlines()[-1])
    assert ours <= n
    return rc, n, ours


RUN = ["run", "examples/ptx/dot_dp4a.sm_90.ptx", "--launch", "examples/manifest.json#dot_dp4a"]


def test_a_second_run_compiles_no_dataclass_methods(tmp_path):
    """The first process compiles the method texts of the dataclasses a run defines (~400) and
    keeps their code; the next compiles none of them, with its user cache warm or empty (then
    from the copy beside isa/dataclass_code.py that the first left); with the cache off, all."""
    installed = tmp_path / "installed"
    rc, first, ours = dataclass_compiles(tmp_path / "cache", installed, *RUN)
    assert rc == 0 and ours > 100, ours
    assert list(installed.glob("*.pickle"))
    assert dataclass_compiles(tmp_path / "cache", installed, *RUN) == (0, 0, 0)          # nothing compiled
    rc, _, fresh = dataclass_compiles(tmp_path / "empty", installed, *RUN)    # a new user: the copy serves
    assert rc == 0 and fresh == 0, fresh
    rc, off, ours_off = dataclass_compiles(tmp_path / "cache", installed, *RUN, off=True)
    assert rc == 0 and ours_off == ours and off >= ours, (off, ours_off, ours)
    # another command defines other classes: it adds them, and the run's stay
    timed = [*RUN, "--timing", "h200"]                 # the timing model's classes (sim.timing)
    rc, _, more = dataclass_compiles(tmp_path / "cache", installed, *timed)
    assert rc == 0 and 0 < more < ours, more
    assert dataclass_compiles(tmp_path / "cache", installed, *RUN) == (0, 0, 0)
    assert dataclass_compiles(tmp_path / "cache", installed, *timed)[::2] == (0, 0)   # (it parses SASS: Lark's)


SAME_CODE = """
import dataclasses, importlib, json, sys
import isa.dataclass_code as dc
modules = [importlib.import_module(m) for m in sys.argv[1:]]
def methods(mod):
    out = {}
    for name, cls in vars(mod).items():
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == mod.__name__:
            for m in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
                f = cls.__dict__.get(m)
                f = getattr(f, "__wrapped__", f)               # __repr__ under dataclasses' recursion guard
                if f is not None and hasattr(f, "__code__"):
                    out[f"{name}.{m}"] = (f.__code__, f.__annotations__, f.__defaults__, f.__kwdefaults__)
    return out
cached = {m.__name__: methods(m) for m in modules}
assert dc.compiled == 0, dc.compiled                            # all came from the cache
dc.uninstall()
plain = {m.__name__: methods(importlib.reload(m)) for m in modules}  # dataclasses' own exec
same = all(cached[m].keys() == plain[m].keys() and all(
    a[0] == b[0] and a[0].co_filename == b[0].co_filename and a[1:] == b[1:]
    for a, b in zip(cached[m].values(), plain[m].values())) for m in cached)
print(json.dumps([same, sum(len(v) for v in cached.values())]))
"""


def test_a_class_from_cached_code_is_the_class_dataclasses_makes(tmp_path):
    """Every generated method of the IR's and a launch's dataclasses, from the cache, is the code
    ``dataclasses`` compiles itself: same code object (bytecode, constants, flags, so no
    ``__future__`` annotations leak in), file name, annotations and defaults."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), KERNLENS_CACHE=str(tmp_path))
    env.pop("KERNLENS_NO_CACHE", None)
    mods = ["isa.ir", "isa.errors", "sim.launch", "sim.check", "analyzer.report"]
    subprocess.run([sys.executable, "-c", "import " + ", ".join(mods)], env=env, cwd=ROOT, check=True)
    out = subprocess.run([sys.executable, "-c", SAME_CODE, *mods], env=env, cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    same, n = json.loads(out.stdout)
    assert same and n > 150, n


def test_cached_dataclasses_behave_as_dataclasses(tmp_path, monkeypatch):
    """A frozen dataclass of a kernlens module defined twice in one process (the second time from
    the code the first compiled) and one of another module (compiled as always)."""
    import dataclasses
    import types

    import isa.dataclass_code as dc

    monkeypatch.setenv("KERNLENS_CACHE", str(tmp_path))
    monkeypatch.delenv("KERNLENS_NO_CACHE", raising=False)
    monkeypatch.setattr(dc, "_codes", {})
    monkeypatch.setattr(dc, "_used", {})
    monkeypatch.setattr(dc, "_added", True)          # (no write at exit from this test)
    monkeypatch.setattr(dc, "compiled", 0)
    src = ("from dataclasses import dataclass, field\n"
           "@dataclass(frozen=True)\n"
           "class Reg:\n"
           "    '''%r1 of `add.s32 %r1, %r2, 4;`'''\n"
           "    name: str\n"
           "    width: int = 32\n"
           "    uses: tuple = field(default=(), compare=False)\n")
    classes = []
    for name in ("isa.fake_ir", "isa.fake_ir", "elsewhere"):
        module = types.ModuleType(name)
        monkeypatch.setitem(sys.modules, name, module)
        exec(src, module.__dict__)
        classes.append(module.Reg)
    assert dc.compiled == 6                        # init, repr, eq, hash, setattr, delattr: once
    for Reg in classes:
        r = Reg("%r1", uses=(3,))
        assert r == Reg("%r1") and hash(r) == hash(Reg("%r1")) and r != Reg("%r1", 64)
        assert repr(r) == "Reg(name='%r1', width=32, uses=(3,))"
        with pytest.raises(dataclasses.FrozenInstanceError):
            r.name = "%r2"
        assert dataclasses.replace(r, width=64).width == 64 and dataclasses.asdict(r)["uses"] == (3,)
        assert [f.name for f in dataclasses.fields(Reg)] == ["name", "width", "uses"]
        with pytest.raises(TypeError):
            Reg()
    assert len(dc._used["isa.fake_ir"]) == 6 and "elsewhere" not in dc._used


def test_the_entry_holds_each_module_s_current_classes_only(tmp_path, monkeypatch):
    """Saving replaces the texts of the modules this process defined classes for (an edited
    class's old code goes) and keeps the others' (another command's classes stay)."""
    import types

    import isa.dataclass_code as dc
    from isa import cache

    monkeypatch.setenv("KERNLENS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("KERNLENS_NO_CACHE", raising=False)
    monkeypatch.setattr(dc, "INSTALLED", tmp_path / "installed")
    cache.store(dc.KIND, dc.entry_name(), {"sim.other": {"def __create_fn__(): pass": b"x"},
                                           "isa.fake": {"def __create_fn__(): old": b"y"}})
    monkeypatch.setattr(dc, "_codes", None)
    monkeypatch.setattr(dc, "_used", {})
    monkeypatch.setattr(dc, "_added", True)          # (no write at exit from this test: save() below)
    monkeypatch.setattr(dc, "compiled", 0)
    module = types.ModuleType("isa.fake")
    monkeypatch.setitem(sys.modules, "isa.fake", module)
    exec("from dataclasses import dataclass\n@dataclass(frozen=True)\nclass Loc:\n    line: int\n", module.__dict__)
    assert dc.compiled == 6
    dc.save()
    entry = cache.load(dc.KIND, dc.entry_name())
    assert set(entry) == {"sim.other", "isa.fake"} and entry["sim.other"] == {"def __create_fn__(): pass": b"x"}
    assert len(entry["isa.fake"]) == 6 and "def __create_fn__(): old" not in entry["isa.fake"]
    assert (tmp_path / "installed" / f"{dc.entry_name()}.pickle").read_bytes() == \
        (tmp_path / "cache" / dc.KIND / f"{dc.entry_name()}.pickle").read_bytes()


PAUSED = """
import atexit, gc, json, sys
import kernlens.cli as k
seen = {"collections_before_main": 0, "collections": 0}
gc.callbacks.append(lambda phase, info: seen.__setitem__("collections", seen["collections"] + 1) if phase == "start"
                    else None)
main = k.main
def probe(argv=None):
    seen.update(collections_before_main=seen["collections"], enabled=gc.isenabled(), frozen=gc.get_freeze_count(),
                numpy="numpy" in sys.modules)
    return main(argv)
k.main = probe
atexit.register(lambda: print(json.dumps(seen)))
sys.argv = ["kernlens", *sys.argv[1:]]
k.entry()
"""


def test_the_program_imports_its_command_with_the_collector_paused(tmp_path):
    """``kernlens`` (kernlens.cli.entry) imports the command's module, numpy with it, with no
    garbage collection, then freezes what was imported and turns the collector on for the command."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), KERNLENS_CACHE=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", PAUSED, *RUN], env=env, cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["numpy"] and seen["collections_before_main"] == 0, seen
    assert seen["enabled"] and seen["frozen"] > 10_000, seen
    assert seen["collections"] > 0                   # on again for the command itself


VALIDATE_PAUSED = """
import atexit, gc, json, os, runpy, sys
import kernlens.cli as k
seen = {"collections": 0}
gc.callbacks.append(lambda phase, info: seen.__setitem__("collections", seen["collections"] + 1) if phase == "start"
                    else None)
paused = k.import_paused
def probe(module):
    before = seen["collections"]
    paused(module)
    seen.update(module=module, during=seen["collections"] - before, enabled=gc.isenabled(),
                frozen=gc.get_freeze_count(), numpy="numpy" in sys.modules)
k.import_paused = probe
atexit.register(lambda: print(json.dumps(seen)))
sys.argv = ["analyzer.cli", sys.argv[1], "-o", os.devnull]
runpy.run_module("analyzer.cli", run_name="__main__")
"""


def test_validate_kernel_imports_its_analyses_with_the_collector_paused(tmp_path):
    """``python -m analyzer.cli`` (and the installed ``validate-kernel``, kernlens.cli.validate_entry)
    imports analyzer.cli, numpy and the IR with it, with no garbage collection, then freezes what
    was imported: the collection after each file walks that file's IR and reports only."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), KERNLENS_CACHE=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", VALIDATE_PAUSED, "examples/ptx/hgemm_wmma.sm_90.ptx"], env=env,
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen.get("module") == "analyzer.cli" and seen["numpy"] and seen["during"] == 0, seen
    assert seen["enabled"] and seen["frozen"] > 10_000, seen


MODULE_PAUSED = """
import atexit, gc, json, os, runpy, sys
seen = {"before": 0, "after": 0}
def count(phase, info):
    if phase != "start":
        return
    main = sys.modules.get("__main__")
    ours = str(getattr(main, "__file__", "")).endswith(os.path.join("kernlens", "cli.py"))
    if ours:
        seen["after" if "sim.launch" in sys.modules else "before"] += 1
gc.callbacks.append(count)
atexit.register(lambda: print(json.dumps(seen)))
sys.argv = ["kernlens.cli", *sys.argv[1:]]
runpy.run_module("kernlens.cli", run_name="__main__", alter_sys=True)
"""


def test_python_m_kernlens_cli_imports_argparse_and_its_command_with_the_collector_paused(tmp_path):
    """``python -m kernlens.cli`` turns the collector off from its first line (argparse's import
    and the rest) until the command's modules are imported and frozen (kernlens.cli.entry)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), KERNLENS_CACHE=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", MODULE_PAUSED, *RUN], env=env, cwd=ROOT, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["before"] == 0 and seen["after"] > 0, seen


def test_the_analyzer_package_imports_nothing():
    """``python -m analyzer.cli`` imports the package before the program can pause the collector
    (kernlens.cli.validate_entry): the package itself imports nothing, so that isa, numpy and the
    analyses are imported paused (measured: 10 fewer collections, ~1.5 ms of CPU)."""
    code = "import sys, analyzer; print(sorted(m for m in sys.modules if m.split('.')[0] in ('isa', 'numpy', 'sim')))"
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
