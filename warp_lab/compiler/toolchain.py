"""NVIDIA's tools: ptxas (PTX → cubin + resource usage) and nvdisasm (cubin → SASS).

The tools are found with ``cuda.pathfinder`` (NVIDIA's pip wheels, or a CUDA
toolkit under ``CUDA_HOME``/``CUDA_PATH``) and run with argument lists in a
private temporary folder that is removed afterwards. We call ptxas rather
than the driver's JIT because it works without a GPU, reports registers and
spills (``-v``), and keeps line info (``-lineinfo``) for the SASS view.

CUDA 13's tools assemble and disassemble ``sm_75`` and newer only. For older
targets ptxas comes from CUDA 12.9's wheel (``nvidia-cuda-nvcc-cu12``,
installed side by side at ``nvidia/cuda_nvcc/bin``). No nvdisasm wheel older
than 13.2 exists, so SASS for those targets needs a CUDA toolkit up to 13.0
installed by the user: :func:`find_tool` looks under ``CUDA_HOME``,
``CUDA_PATH``, ``PATH`` and ``/usr/local/cuda`` for one, and otherwise reports
SASS missing, with the reason and what it found.
"""

from __future__ import annotations

import concurrent.futures
import functools
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from warp_lab.compiler.artifact import Resources
from warp_lab.errors import ToolchainError
from warp_lab.options import CompileOptions, sm_number

__all__ = ["Tool", "find_tool", "make_cubin", "make_sass", "disassemble", "compact_sass",
           "parse_ptxas_log", "LIFE_RANGE_ARGS"]

#: First SM that CUDA 13's ptxas and nvdisasm accept (CUDA 13.0 release notes:
#: Maxwell, Pascal and Volta support removed from the compilers).
_CUDA13_MIN_SM = 75

_TIMEOUT_S = 120


@dataclass(frozen=True)
class Tool:
    """A located NVIDIA tool.

    Attributes:
        name: ``"ptxas"`` or ``"nvdisasm"``.
        path: absolute path of the executable.
        version: release string (``"13.5"``), from ``--version``.
    """

    name: str
    path: str
    version: str

    @property
    def major(self) -> int:
        """The release's major number (13 for ``"13.5"``); 0 for ``"unknown"``."""
        return self.release[0]

    @property
    def release(self) -> tuple[int, int]:
        """The release as ``(major, minor)`` (``(13, 5)`` for ``"13.5"``); ``(0, 0)`` for
        ``"unknown"``."""
        m = re.match(r"(\d+)(?:\.(\d+))?", self.version)
        return (int(m.group(1)), int(m.group(2) or 0)) if m else (0, 0)

    @property
    def handles_pre_turing(self) -> bool:
        """Whether this tool takes ``sm_50`` .. ``sm_72``: ptxas before 13.0 (CUDA 13.0
        release notes: Maxwell, Pascal and Volta removed from the compilers), nvdisasm up
        to 13.0 (nvdisasm 13.5 on an sm_70 cubin: 'CUDA architecture "SM70" is
        deprecated. Please use CUDA toolkit 13.0 or earlier')."""
        last = (13, 0) if self.name == "nvdisasm" else (12, 99)
        return (1, 0) <= self.release <= last


def _version_of(path: str) -> str:
    """The ``release X.Y`` a tool's ``--version`` prints; ``"unknown"`` when it prints none
    or cannot be run (running it for real then fails with a :class:`ToolchainError`)."""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    m = re.search(r"release (\d+\.\d+)", out.stdout)
    return m.group(1) if m else "unknown"


def _cuda12_ptxas() -> str | None:
    try:
        import nvidia.cuda_nvcc as cu12  # wheel nvidia-cuda-nvcc-cu12
    except ImportError:
        return None
    for root in cu12.__path__:
        path = os.path.join(root, "bin", "ptxas")
        if os.access(path, os.X_OK):
            return path
    return None


#: environment variables naming a folder a tool (or libdevice) may be found under
_TOOL_ROOTS = ("CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX")


def _absolute_path_entries() -> str:
    """``PATH`` without its relative entries (``.``, ``bin``, the empty entry that means
    the current folder): a tool is run only from an absolute folder, never from whatever
    folder a notebook happens to run in."""
    return os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if p and os.path.isabs(p))


def _relative_root_tools(name: str) -> set[str]:
    """The real paths a tool ``name`` would have under a *relative* ``CUDA_HOME``,
    ``CUDA_PATH`` or ``CONDA_PREFIX`` (``<root>/bin/<name>``): the current folder's, which
    :func:`find_tool` refuses whoever found it (``cuda.pathfinder`` takes those variables as
    they are)."""
    return {os.path.realpath(os.path.join(os.environ[var], "bin", name))
            for var in _TOOL_ROOTS if os.environ.get(var) and not os.path.isabs(os.environ[var])}


def _trusted_tool(path: str | None, name: str) -> str | None:
    """``path`` when it is an absolute path not reached through a relative root
    (:func:`_relative_root_tools`), else None."""
    if not path or not os.path.isabs(path):
        return None
    return None if os.path.realpath(path) in _relative_root_tools(name) else path


def _toolkit_candidates(name: str) -> list[str]:
    """Paths of ``name`` in user-installed CUDA toolkits: ``$CUDA_HOME/bin``,
    ``$CUDA_PATH/bin``, the first on ``PATH``, ``/usr/local/cuda/bin``; executable files
    only, each once, in that order. Only absolute folders are looked in: a relative
    ``CUDA_HOME``/``CUDA_PATH`` and the relative entries of ``PATH`` are skipped
    (:func:`_absolute_path_entries`), so the current folder's ``nvdisasm`` never runs."""
    paths = [os.path.join(os.environ[var], "bin", name)
             for var in ("CUDA_HOME", "CUDA_PATH")
             if os.environ.get(var) and os.path.isabs(os.environ[var])]
    paths += [shutil.which(name, path=_absolute_path_entries()) or "",
              os.path.join("/usr/local/cuda/bin", name)]
    seen: list[str] = []
    for path in paths:
        if path and os.path.isabs(path) and os.path.isfile(path) and os.access(path, os.X_OK) \
                and path not in seen:
            seen.append(path)
    return seen


@functools.lru_cache(maxsize=None)
def find_tool(name: str, sm: int = 90) -> Tool:
    """Locate ``ptxas`` or ``nvdisasm`` able to handle ``sm_<sm>``.

    For ``sm_75`` and newer: the tool ``cuda.pathfinder`` finds (NVIDIA's wheels, which
    warp_lab depends on, or a toolkit under ``CUDA_HOME``/``CUDA_PATH``), unless it found
    it under a relative ``CUDA_HOME``/``CUDA_PATH``/``CONDA_PREFIX`` (the current folder:
    :func:`_trusted_tool`). For ``sm_50`` ..
    ``sm_72`` (see :attr:`Tool.handles_pre_turing`): the first old enough of that one,
    CUDA 12.9's ptxas wheel (ptxas only), then the toolkits of :func:`_toolkit_candidates`.

    Args:
        name: ``"ptxas"`` or ``"nvdisasm"``.
        sm: target compute capability as an integer (86 for sm_86).

    Raises:
        ToolchainError: no suitable tool is installed; the message says which
            wheel or toolkit to install and which tools were found too new.
    """
    from cuda import pathfinder

    wheel = {"ptxas": "nvidia-cuda-nvcc", "nvdisasm": "nvidia-cuda-nvdisasm"}[name]
    path = None
    try:
        path = pathfinder.find_nvidia_binary_utility(name)
    except Exception:  # pathfinder's not-found errors differ between versions
        path = None
    path = _trusted_tool(path, name)   # (never the current folder's, via a relative root)
    if sm >= _CUDA13_MIN_SM:
        if path:
            return Tool(name, path, _version_of(path))
        raise ToolchainError(f"{name} was not found; install it with `pip install {wheel}` "
                             "or set CUDA_HOME to a CUDA toolkit", tool=name)
    candidates = [path] if path else []
    if name == "ptxas":
        candidates.append(_cuda12_ptxas())
    candidates += _toolkit_candidates(name)
    too_new: list[str] = []
    for cand in dict.fromkeys(c for c in candidates if c):
        tool = Tool(name, cand, _version_of(cand))
        if tool.handles_pre_turing:
            return tool
        too_new.append(f"{cand} ({tool.version})")
    found = f" (found, too new: {', '.join(too_new)})" if too_new else ""
    if name == "ptxas":
        raise ToolchainError(
            f"sm_{sm} needs CUDA 12's ptxas (CUDA 13 assembles sm_75 and newer){found}; "
            "install it with `pip install nvidia-cuda-nvcc-cu12`", tool=name)
    raise ToolchainError(
        f"nvdisasm for sm_{sm} needs a CUDA toolkit 13.0 or older: nvdisasm 13.1+ no longer "
        f"reads cubins for sm_50..sm_72 and no older nvdisasm wheel exists{found}; install "
        "such a toolkit and set CUDA_HOME to it", tool=name)


def _run(tool: Tool, args: list[str], cwd: str) -> subprocess.CompletedProcess:
    argv = [tool.path, *args]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise ToolchainError(f"{tool.name} did not finish in {_TIMEOUT_S} s", tool=tool.name,
                             argv=argv) from None
    except OSError as exc:
        raise ToolchainError(f"{tool.name} could not be run: {exc}", tool=tool.name,
                             argv=argv) from None
    if proc.returncode != 0:
        raise ToolchainError(f"{tool.name} failed", tool=tool.name, argv=argv,
                             returncode=proc.returncode, log=proc.stdout + proc.stderr)
    return proc


_FUNC_RE = re.compile(r"Function properties for (\S+)")
_COMPILING_RE = re.compile(r"Compiling entry function '([^']+)'")
_FRAME_RE = re.compile(
    r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED_RE = re.compile(r"Used (\d+) registers")
_BARRIERS_RE = re.compile(r"used (\d+) barriers")
_SMEM_RE = re.compile(r"(\d+) bytes smem")
_CMEM_RE = re.compile(r"(\d+) bytes cmem\[\d+\]")
_LMEM_RE = re.compile(r"(\d+) bytes lmem")
_STACK_RE = re.compile(r"(\d+) bytes cumulative stack size")
_GMEM_RE = re.compile(r"(\d+) bytes gmem")


def parse_ptxas_log(log: str, entry: str, arch: str) -> Resources:
    """Parse ``ptxas -v`` output into :class:`Resources` for one entry function.

    The log has, per function, a ``Function properties for NAME`` block
    (stack frame and spill bytes) and, for entries, a ``Compiling entry
    function 'NAME'`` block ending in ``Used N registers, used B barriers,
    S bytes smem, C bytes cmem[0]`` (CUDA 12/13: also ``K bytes cumulative stack
    size`` before ``smem``).

    ``Resources.local``, the local memory per thread, is what ptxas reports of it:
    ``bytes lmem`` where an older ptxas prints that, else the ``cumulative stack
    size`` (the entry's stack frame plus the deepest chain of its callees' frames:
    spilled registers and local arrays live there), else the entry's stack frame.

    Raises:
        ToolchainError: the log has no register count for ``entry``.
    """
    res = {"registers": None, "stack_frame": 0, "spill_stores": 0, "spill_loads": 0,
           "shared": 0, "const": 0, "local": 0, "barriers": 0, "global_bytes": 0}
    current = None
    stack = lmem = None
    for line in log.splitlines():
        m = _GMEM_RE.search(line)
        if m and current is None:
            res["global_bytes"] = int(m.group(1))
        m = _COMPILING_RE.search(line) or _FUNC_RE.search(line)
        if m:
            current = m.group(1)
            continue
        if current != entry:
            continue
        if m := _FRAME_RE.search(line):
            res["stack_frame"], res["spill_stores"], res["spill_loads"] = map(int, m.groups())
        if m := _USED_RE.search(line):
            res["registers"] = int(m.group(1))
            if b := _BARRIERS_RE.search(line):
                res["barriers"] = int(b.group(1))
            if s := _SMEM_RE.search(line):
                res["shared"] = int(s.group(1))
            if l := _LMEM_RE.search(line):
                lmem = int(l.group(1))
            if k := _STACK_RE.search(line):
                stack = int(k.group(1))
            res["const"] = sum(int(c) for c in _CMEM_RE.findall(line))
    if res["registers"] is None:
        raise ToolchainError(f"ptxas reported no register count for {entry!r}", tool="ptxas",
                             log=log)
    res["local"] = next(v for v in (lmem, stack, res["stack_frame"]) if v is not None)
    return Resources(arch=arch, **res)


def make_cubin(ptx: str, options: CompileOptions, entry: str) -> tuple[bytes, Resources, str]:
    """Assemble PTX with ptxas.

    Args:
        ptx: PTX text.
        options: ``arch``, ``lineinfo`` (adds ``-lineinfo``), ``maxrregcount``.
        entry: the entry whose resources to report.

    Returns:
        ``(cubin, resources, log)``: the ELF bytes, the parsed ``-v`` report
        and ptxas's raw log.

    Raises:
        ToolchainError: ptxas is missing or rejects the PTX (with its log and
            the command line).
    """
    tool = find_tool("ptxas", options.sm)
    args = ["-v", "--gpu-name", options.arch, "-O3"]
    if options.lineinfo:
        args.append("-lineinfo")
    if options.maxrregcount:
        args += ["--maxrregcount", str(int(options.maxrregcount))]
    with tempfile.TemporaryDirectory(prefix="warp_lab-") as tmp:
        with open(os.path.join(tmp, "kernel.ptx"), "w") as f:
            f.write(ptx)
        proc = _run(tool, [*args, "kernel.ptx", "-o", "kernel.cubin"], tmp)
        with open(os.path.join(tmp, "kernel.cubin"), "rb") as f:
            cubin = f.read()
    log = proc.stdout + proc.stderr
    return cubin, parse_ptxas_log(log, entry, options.arch), log


_SASS_INSTRUCTION = re.compile(r"/\*[0-9a-f]{4,}\*/")
_SASS_LABEL = re.compile(r"^\s*([\w.$]+):\s*$")


def compact_sass(text: str) -> str:
    """nvdisasm output without its ELF bookkeeping, as Compiler Explorer shows it.

    Keeps instructions (``/*0040*/ ...``), nvdisasm's line-info comments
    (``//## File "...", line N``), function and branch-target labels; drops
    section headers and separators, symbol directives (``.type``, ``.size``,
    ``.other``, ``.align``...), the symbol table and the ``NOP`` padding after
    a function's last instruction.
    """
    out: list[str] = []
    pending_nops: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if _SASS_INSTRUCTION.search(line):
            if re.search(r"\bNOP\s*;", line):
                pending_nops.append(line)
                continue
            out += pending_nops
            pending_nops = []
            out.append(line)
        elif stripped.startswith("//##"):
            out.append(line)
        elif (m := _SASS_LABEL.match(line)) and not m.group(1).startswith(".text."):
            pending_nops = []  # padding before a label (function end) is dropped
            if not m.group(1).startswith(".L") and out:
                out.append("")  # a blank line before each function
            out.append(line)
    return "\n".join(out) + "\n"


def make_sass(cubin: bytes, arch: str, extra_args: tuple[str, ...] = (),
              compact: bool = False) -> str:
    """Disassemble a cubin with nvdisasm, keeping line info (``-c -g``).

    Args:
        cubin: ELF bytes from :func:`make_cubin`.
        arch: the ``sm_XX`` it was built for (chooses the nvdisasm).
        extra_args: more nvdisasm flags (``("--print-life-ranges",)``).
        compact: return :func:`compact_sass` of the listing (what
            ``CompiledKernel.sass`` holds).

    Raises:
        ToolchainError: nvdisasm is missing or fails.
    """
    text, = _nvdisasm(cubin, arch, [["-c", "-g", *extra_args, "kernel.cubin"]])
    return compact_sass(text) if compact else text


def _nvdisasm(cubin: bytes, arch: str, runs: list[list[str]]) -> list[str]:
    """The output of one nvdisasm run per argument list (naming ``kernel.cubin``) over one
    temporary copy of ``cubin``; several runs go concurrently (two processes).

    Raises:
        ToolchainError: nvdisasm is missing or fails.
    """
    tool = find_tool("nvdisasm", sm_number(arch))
    with tempfile.TemporaryDirectory(prefix="warp_lab-") as tmp:
        with open(os.path.join(tmp, "kernel.cubin"), "wb") as f:
            f.write(cubin)
        if len(runs) == 1:
            return [_run(tool, runs[0], tmp).stdout]
        with concurrent.futures.ThreadPoolExecutor(len(runs)) as pool:
            futures = [pool.submit(_run, tool, args, tmp) for args in runs]
            return [f.result().stdout for f in futures]


#: nvdisasm's register life-range table with counts only (``-lrm count``: the
#: registers occupied per file at each instruction, no per-register columns);
#: nvdisasm ignores ``-g`` in this mode, so it is a run of its own.
LIFE_RANGE_ARGS = ("--life-range-mode", "count")


def disassemble(cubin: bytes, arch: str, listing: bool = True, life_ranges: bool = False,
                spills: bool = True) -> tuple[str | None, str | None]:
    """The SASS listing and/or the register life-range table of a cubin.

    nvdisasm starts slowly (0.4-0.7 s of CPU per run on a 2-core x86 machine,
    most of it before the first instruction, whatever the cubin's size), and
    the two outputs need two runs because ``--print-life-ranges`` drops line
    info; so when both are wanted the two runs go concurrently (two
    processes, one temporary cubin).

    Args:
        cubin: ELF bytes from :func:`make_cubin`.
        arch: the ``sm_XX`` it was built for (chooses the nvdisasm).
        listing: produce the :func:`compact_sass` listing with line info.
        life_ranges: produce the ``nvdisasm -c --life-range-mode count``
            table (:func:`warp_lab.analysis.liveness.parse_life_ranges`).
        spills: whether ptxas reported spill stores or loads. Without
            spills the listing is made with ``--no-dataflow``: nvdisasm's
            dataflow analysis (about a quarter of its run time) only adds
            ``(*"SpillRefill"*)`` notes to spill code, and branch-stack
            targets to pre-Volta code, which CUDA 13's nvdisasm does not
            read; on 220 corpus, real-kernel and test cubins the listings
            were otherwise byte-identical. The life-range table always
            needs the analysis.

    Returns:
        ``(listing, life_ranges)``, each None when not asked for.

    Raises:
        ToolchainError: nvdisasm is missing or fails.
    """
    runs = []
    if listing:
        runs.append(["-c", "-g", *(() if spills else ("--no-dataflow",)), "kernel.cubin"])
    if life_ranges:
        runs.append(["-c", *LIFE_RANGE_ARGS, "kernel.cubin"])
    if not runs:
        return None, None
    outs = _nvdisasm(cubin, arch, runs)
    text = compact_sass(outs.pop(0)) if listing else None
    return text, (outs.pop(0) if life_ranges else None)
