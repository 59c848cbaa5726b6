"""The mypyc-compiled fabric modules (runtime/fabric/native.py) against the pure ones.

The loader's rules are checked on a fake build (always). With a current build
(`python -m steplus.runtime.fabric.build_native build`), pinned workloads run once
with the compiled modules and once pure, each in its own process (a process
imports one or the other), and must give the same cycles, firings and traffic
— and the golden pins, which come from the pure model.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from steplus.runtime.fabric import native

HERE = Path(__file__).resolve().parent
UNIT = HERE.parents[1]


# -- the loader (no build needed) ---------------------------------------------
@pytest.fixture
def fake_build(tmp_path, monkeypatch):
    """A stamp for the sources as they are, with stand-in libraries (their hashes recorded)."""
    out = tmp_path / "_native"
    out.mkdir()
    os.chmod(out, 0o755)  # whatever the umask: group-writable would be refused
    files = native.expected_files()
    for i, f in enumerate(files.values()):
        (out / f).write_bytes(b"stand-in %d" % i)
        os.chmod(out / f, 0o644)
    stamp = {"suffix": native._suffix(), "modules": list(native.MODULES),
             "sha256": {m: native._digest(m) for m in native.MODULES}, "files": files,
             "binaries": {f: hashlib.sha256(b"stand-in %d" % i).hexdigest()
                          for i, f in enumerate(files.values())}}
    monkeypatch.setattr(native, "OUT", out)
    monkeypatch.setattr(native, "STAMP", out / "stamp.json")
    _rewrite(stamp)
    return stamp


def _rewrite(stamp: dict) -> None:
    native.STAMP.write_text(json.dumps(stamp))
    os.chmod(native.STAMP, 0o644)


def test_a_build_matching_the_sources_is_current(fake_build):
    assert native.current()
    assert native.why_not_current() is None


def test_an_edited_source_makes_the_build_stale(fake_build):
    fake_build["sha256"]["engine"] = "0" * 64
    _rewrite(fake_build)
    assert native.why_not_current() == "engine.py changed since the build"


def test_a_build_for_another_interpreter_is_not_used(fake_build):
    fake_build["suffix"] = ".cpython-39-x86_64-linux-gnu.so"
    _rewrite(fake_build)
    assert native.why_not_current() == "built for another interpreter"


def test_a_missing_library_or_stamp_is_not_current(fake_build):
    engine = native.expected_files()[f"{native.PACKAGE}.engine"]
    (native.OUT / engine).unlink()
    assert native.why_not_current() == f"{engine}: No such file or directory"
    native.STAMP.write_text("not json")
    assert native.why_not_current() == "no readable stamp.json"


def test_the_environment_switch_disables_the_compiled_modules(fake_build, monkeypatch):
    monkeypatch.setattr(native, "_finder", None)
    monkeypatch.setenv(native.ENV, "0")
    assert not native.install()
    assert native._finder is None


# -- the loader refuses what it cannot trust (issue 24) -------------------------
def test_an_altered_library_is_not_loaded(fake_build):
    engine = native.expected_files()[f"{native.PACKAGE}.engine"]
    (native.OUT / engine).write_bytes(b"stand-in, then altered")
    assert native.why_not_current() == f"{engine} does not match its hash in the stamp"


def test_a_stamp_without_library_hashes_is_not_current(fake_build):
    del fake_build["binaries"]
    _rewrite(fake_build)
    assert native.why_not_current() == "the stamp has no source or library hashes"


@pytest.mark.parametrize("name, path", [
    ("os", "os.cpython-311-x86_64-linux-gnu.so"),  # a module that is not a fabric module
    (f"{native.PACKAGE}.engine", "../../evil.so"),  # a path outside the folder
    (f"{native.PACKAGE}.engine", "/tmp/evil.so"),
])
def test_a_stamp_naming_other_files_is_refused(fake_build, name, path):
    fake_build["files"][name] = path
    fake_build["binaries"][path] = "0" * 64
    _rewrite(fake_build)
    assert native.why_not_current() == "the stamp lists other files than the fabric modules"


def test_the_finder_knows_only_the_fabric_modules(fake_build, monkeypatch):
    monkeypatch.setattr(native, "_finder", None)
    monkeypatch.setattr(native.sys, "meta_path", list(native.sys.meta_path))
    monkeypatch.delenv(native.ENV, raising=False)
    assert native.install()
    assert native._finder is not None
    assert native._finder.find_spec("os") is None
    spec = native._finder.find_spec(f"{native.PACKAGE}.hbm")
    assert spec is not None and Path(spec.origin).parent == native.OUT


def test_a_folder_others_can_write_is_refused(fake_build):
    os.chmod(native.OUT, 0o777)
    assert native.why_not_current() == "_native is writable by others (mode 777)"
    os.chmod(native.OUT, 0o755)
    hbm = native.expected_files()[f"{native.PACKAGE}.hbm"]
    os.chmod(native.OUT / hbm, 0o666)
    assert native.why_not_current() == f"{hbm} is writable by others (mode 666)"


def test_a_folder_another_user_owns_is_refused(fake_build, monkeypatch):
    uid = os.lstat(native.OUT).st_uid
    monkeypatch.setattr(native, "_my_uid", lambda: uid + 1)
    assert native.why_not_current() == f"_native is owned by another user (uid {uid})"


def test_symlinks_are_refused(fake_build, tmp_path):
    engine = native.expected_files()[f"{native.PACKAGE}.engine"]
    (tmp_path / "elsewhere.so").write_bytes((native.OUT / engine).read_bytes())
    (native.OUT / engine).unlink()
    (native.OUT / engine).symlink_to(tmp_path / "elsewhere.so")
    assert native.why_not_current() == f"{engine} is not a regular file"
    real = tmp_path / "real"
    native.OUT.rename(real)
    native.OUT.symlink_to(real, target_is_directory=True)
    assert native.why_not_current() == "_native is not a regular folder"


# -- compiled vs pure on pinned workloads ---------------------------------------
def _run_workloads() -> dict:
    """Run in a child process: the pinned workloads' results and which modules are compiled."""
    sys.path[:0] = [str(UNIT), str(HERE)]
    from xdsl.dialects.builtin import IntegerAttr

    from golden import MOE_CYCLES, SWIGLU_HDL_CYCLES
    from steplus.dialects.step import ops as so
    from steplus.dialects.target.fabric import get_preset
    from steplus.runtime.fabric.build import build_program
    from swiglu_graphs import swiglu_graph
    from test_fabric_moe import TRACE, _specialized

    runs = {}
    m = build_program(swiglu_graph(64, 256, 512, 32, 128), get_preset("swiglu-hdl")).run()
    runs["swiglu 32x128"] = [m.cycles, m.firings, m.offchip_traffic, SWIGLU_HDL_CYCLES[(32, 128)]]
    for tile_n in (16, None):
        module, graph, _, _ = _specialized("mixtral", tile_n, TRACE)
        cfg = get_preset("step-eval")
        if tile_n is None:  # as test_fabric_moe: dynamic tiling's bandwidths (§8.2)
            cfg = cfg.with_(compute_bw=6400)
            for op in graph.body.block.ops:
                hint = op.output.name_hint or "" if isinstance(op, so.AccumOp) else ""
                if hint.startswith("acc") and hint != "acc_out":
                    op.attributes["compute_bw"] = IntegerAttr(1024, 64)
        m = build_program(module, cfg).run()
        runs[f"mixtral 64 {tile_n}"] = [m.cycles, m.firings, m.offchip_traffic,
                                        MOE_CYCLES[("mixtral", 64, tile_n)]]
    return {"compiled": native.active(), "runs": runs}


def _child(enabled: bool) -> dict:
    env = dict(os.environ, **{native.ENV: "1" if enabled else "0"})
    out = subprocess.run([sys.executable, __file__], env=env, capture_output=True, text=True,
                         timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


@pytest.mark.skipif(not native.current(),
                    reason="no current compiled build (python -m steplus.runtime.fabric.build_native build)")
def test_compiled_and_pure_modules_give_identical_cycles():
    fast, pure = _child(True), _child(False)
    assert fast["compiled"] == list(native.MODULES)
    assert pure["compiled"] == []
    assert fast["runs"] == pure["runs"]
    for name, (cycles, _, _, pinned) in pure["runs"].items():
        assert cycles == pinned, name


if __name__ == "__main__":
    print(json.dumps(_run_workloads()))
