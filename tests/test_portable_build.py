"""llama.cpp is built for every x86-64 CPU with AVX2, not for the machine it was built on: the installed
build's features (its system info) are the portable set, without AVX-512 or AMX; and what the
checks say of builds for other CPUs (geval/judging/native.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from helpers import REPO

from geval.judging import build
from geval.judging.native import PORTABLE, REINSTALL, build_features, build_problems, cpu, native_only

EPYC = ("model name\t: AMD EPYC\nflags\t\t: fpu sse sse2 pni ssse3 fma f16c avx avx2 bmi2 avx512f avx512dq avx512bw "
        "avx512vl avx512vbmi avx512_vnni avx512_bf16 hypervisor\n")
SAPPHIRE_RAPIDS_VM = ("model name\t: Intel(R) Xeon(R) Platinum 8488C\nflags\t\t: fpu sse sse2 pni ssse3 fma f16c avx "
                      "avx2 bmi2 avx512f avx512vbmi avx512_vnni avx512_bf16 amx_bf16 amx_tile amx_int8 hypervisor\n")
HASWELL = "model name\t: Intel(R) Xeon(R) CPU E5-2680 v3\nflags\t\t: fpu sse sse2 pni ssse3 fma f16c avx avx2 bmi2\n"
NATIVE_ON_SPR = ("CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | AVX512 = 1 | "
                 "AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | OPENMP = 1 | "
                 "REPACK = 1 |")
PORTABLE_INFO = ("CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | LLAMAFILE = 1 | "
                 "OPENMP = 1 | REPACK = 1 |")


def test_the_installed_llama_cpp_runs_on_every_x86_64_cpu_with_avx2():
    """Read in a process of its own: a build for another CPU may stop the process that loads it."""
    read = subprocess.run([sys.executable, "-c", "from geval.judging.native import system_info; print(system_info())"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert read.returncode == 0, f"reading llama.cpp's system info failed ({read.returncode}): {read.stderr[-500:]}"
    features = build_features(read.stdout)
    assert {"AVX2", "FMA", "F16C"} <= features, read.stdout  # the fast kernels are there
    assert native_only(features) == [], (f"llama-cpp-python was built for one CPU ({', '.join(native_only(features))}): "
                                         f"rebuild it with `{REINSTALL}`")
    assert not any(feature.startswith("AMX") for feature in features), read.stdout


def test_requirements_build_llama_cpp_portably_in_the_file_the_install_reads():
    """The README's first command builds it in the background (geval/judging/build.py reads
    requirements-llama.txt); the test suite's command installs it before the tests."""
    first_command = next(line for line in (REPO / "README.md").read_text().splitlines() if line.startswith("pip install"))
    assert "python -m geval doctor --build" in first_command and first_command.index("doctor --build") < \
        first_command.index("streamlit run app.py")
    assert "-r requirements-llama.txt" in (REPO / "tests" / "run.sh").read_text()
    assert build.REQUIREMENTS == REPO / "requirements-llama.txt"
    line = next(line for line in (REPO / "requirements-llama.txt").read_text().splitlines()
                if line.startswith("llama-cpp-python"))
    assert "--config-settings=cmake.define.GGML_NATIVE=OFF" in line and "march=native" not in line
    for feature in ("AVX2", "FMA", "F16C"):
        assert f"--config-settings=cmake.define.GGML_{feature}=ON" in line
    for feature in ("AVX512", "AMX_TILE", "AMX_INT8", "AMX_BF16"):
        assert f"--config-settings=cmake.define.GGML_{feature}=OFF" in line
    assert "--config-settings=cmake.define.LLAVA_BUILD=OFF" in line  # no multimodal library: a fifth less to build


#: llama-cpp-python's CMakeLists as it stands around llama.cpp (0.3.36): the common library forced on, then llama.cpp.
BINDING = ('cmake_minimum_required(VERSION 3.21)\nproject(llama_cpp)\n'
           'set(LLAMA_BUILD_COMMON ON CACHE BOOL "Build llama.cpp common library" FORCE)\nadd_subdirectory(llama.cpp)\n')
LLAMA_CPP = ('cmake_minimum_required(VERSION 3.14)\nproject("llama.cpp" C)\n'
             'option(LLAMA_BUILD_COMMON "llama: build common utils library" ON)\n'
             'if (LLAMA_BUILD_COMMON)\n  message(FATAL_ERROR "common is built")\nendif()\n')


def test_both_builds_leave_llama_cpps_common_library_out(tmp_path, monkeypatch):
    """The README's first command (`build.start`) and the suite's (tests/run.sh) give CMake the file that leaves out
    the common library (57 of 140 steps); CMake, on a project shaped as llama-cpp-python's, then does not build it."""
    assert f"-DCMAKE_PROJECT_llama.cpp_INCLUDE=$PWD/{build.WITHOUT_COMMON.relative_to(REPO)}" in \
        (REPO / "tests" / "run.sh").read_text()
    monkeypatch.setenv("CMAKE_ARGS", "-DGGML_CUDA=OFF")  # a user's own are kept
    assert build.build_environment()["CMAKE_ARGS"] == \
        f"-DGGML_CUDA=OFF -DCMAKE_PROJECT_llama.cpp_INCLUDE={build.WITHOUT_COMMON}"
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not installed")
    (tmp_path / "llama.cpp").mkdir()
    (tmp_path / "CMakeLists.txt").write_text(BINDING)
    (tmp_path / "llama.cpp" / "CMakeLists.txt").write_text(LLAMA_CPP)
    configure = ["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "build"),
                 *build.build_environment()["CMAKE_ARGS"].split()]
    done = subprocess.run(configure, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_build_features_are_read_from_the_system_info():
    assert build_features(PORTABLE_INFO) == PORTABLE
    assert build_features(NATIVE_ON_SPR) == PORTABLE | {"AVX512", "AVX512_VBMI", "AVX512_VNNI", "AVX512_BF16",
                                                        "AMX_INT8"}
    assert build_features("CPU : AVX = 0 | AVX2 = 1 |") == {"AVX2"}


def test_the_cpu_is_read_from_cpuinfo():
    machine = cpu(SAPPHIRE_RAPIDS_VM)
    assert machine.model == "Intel(R) Xeon(R) Platinum 8488C" and machine.virtual
    assert {"avx2", "amx_tile"} <= machine.flags
    assert machine.describe().endswith("in a virtual machine; AVX2 yes, AVX-512 yes, AMX yes")
    assert cpu(HASWELL).describe().endswith("AVX2 yes, AVX-512 no, AMX no") and not cpu(HASWELL).virtual


@pytest.mark.parametrize("info, cpuinfo, expected", [
    (PORTABLE_INFO, EPYC, []),
    (PORTABLE_INFO, SAPPHIRE_RAPIDS_VM, []),
    (PORTABLE_INFO, HASWELL, []),
    (NATIVE_ON_SPR, SAPPHIRE_RAPIDS_VM, ["AMX"]),  # built there, runs there until AMX faults in the VM
    (NATIVE_ON_SPR, HASWELL, ["SIGILL"]),  # AVX-512 and AMX on a CPU without them
    (NATIVE_ON_SPR, EPYC, ["SIGILL"]),  # AMX_INT8 on an AMD CPU
    ("CPU : AVX2 = 1 | AVX512 = 1 |", EPYC, []),  # built for this CPU: runs here (the doctor says it is not portable)
])
def test_build_problems_name_what_would_fault_and_the_fix(info, cpuinfo, expected):
    problems = build_problems(build_features(info), cpu(cpuinfo))
    assert [("SIGILL" if "SIGILL" in p else "AMX") for p in problems] == expected
    assert all(p.endswith(REINSTALL) for p in problems)


def test_a_build_beyond_the_portable_set_is_named_native():
    assert native_only(build_features(NATIVE_ON_SPR)) == ["AMX_INT8", "AVX512", "AVX512_BF16", "AVX512_VBMI",
                                                          "AVX512_VNNI"]
    assert native_only(PORTABLE) == []
