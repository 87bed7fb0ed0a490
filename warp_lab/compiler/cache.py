"""Content-addressed cache of compiled kernels: in memory and on disk.

The key is a SHA-256 of everything that can change the output (Cython's
magic and Triton's ``CUDAOptions.hash()`` do the same):

* the kernel's source text, file name and first line (line numbers go into
  the debug info), its annotations; a notebook cell's name, which changes
  each time the cell runs, stands as a name derived from its content
  (:func:`artifact_files`), so running the same cell again is a hit,
* recursively, the source of every ``@wl.func`` it names (also as
  ``module.f``, ``pkg.sub.f``) and every other global value it names (also as
  ``pkg.sub.N``) that the front end
  compiles in (numbers, strings, tuples, ``wl.constant``, type aliases, and
  by name a ``wl`` builtin, ``math`` function or NumPy scalar type):
  :func:`fingerprint`,
* the compile options,
* the versions of warp_lab, llvmlite and LLVM, ptxas and nvdisasm, the
  libdevice file's size and modification time, and a hash of warp_lab's own
  language and compiler sources (so a changed compiler never reuses stale
  artifacts, as Triton hashes its own sources).

On disk an entry is ``<key>.json`` (all text fields and metadata) plus
``<key>.cubin`` (raw bytes) in a per-user folder: ``$WARP_LAB_CACHE_DIR``, or
``$XDG_CACHE_HOME/warp_lab`` (``~/.cache/warp_lab``), :func:`cache_dir`; a folder that is
not the user's own (another's, or writable by others) is not used, :func:`foreign_folder`.
Nothing is pickled; a corrupt, foreign or edited entry (its digest differs,
:func:`_digest`) is ignored and rebuilt, as is anything but a regular file in an entry's
place (a symbolic link, a FIFO: :func:`_read_regular`), a file bigger than
:data:`MAX_FILE_BYTES` (not read), and JSON that does not make an artifact (parsed only
once the digest matched). The ``.json`` file is plain JSON whose first field is that
digest. Each get and put opens the folder once and checks the folder it opened
(:func:`_open_folder`); the entries are read and written relative to its descriptor.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import re
import secrets
import stat
import threading
import types
import warnings
from collections import OrderedDict

import numpy as np

from warp_lab.compiler import abi
from warp_lab.compiler.artifact import CompiledKernel, Resources
from warp_lab.compiler.source_map import SourceMap
from warp_lab.lang import builtins as B
from warp_lab.lang import types as T
from warp_lab.lang.kernel import Constant, Func, Source, is_cell_file
from warp_lab.options import CompileOptions

__all__ = ["fingerprint", "artifact_files", "cache_key", "cache_dir", "foreign_folder",
           "KernelCache", "default_cache"]

_FORMAT = 10  # 8: the entry's digest (_digest); 9: the digest is of the file's own bytes;
# 10: the line map and shared arrays as one source map (SourceMap.to_json)


def _names(code) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _names(const)
    return names


# values whose repr determines the code they produce (T.Type: type aliases, ``T = wl.int32``;
# str: a print() format or an assert message)
_VALUE_TYPES = (bool, int, float, complex, str, tuple, np.generic, T.Type)


def _value_text(value) -> str | None:
    """How a named value the front end compiles in stands in the fingerprint: its ``repr``
    for a number, string, tuple, warp_lab type or ``wl.constant``; a name for what the front
    end resolves by identity (a ``wl`` builtin or ``wl.thread_idx``, a ``math`` function,
    a NumPy scalar type: ``F = math.sin``, ``DT = np.float32``); None for anything else
    (a ``@wl.func`` or a module, which :func:`fingerprint` follows, or a value the front
    end refuses)."""
    if isinstance(value, _VALUE_TYPES):
        return repr(value)
    if isinstance(value, Constant):
        return f"constant({value.value!r})"
    if isinstance(value, (B.Builtin, B.Dim3)):
        return repr(value)
    if isinstance(value, type) and issubclass(value, np.generic):
        return f"numpy.{value.__name__}"
    try:
        math_name = B.MATH_MODULE.get(value)
    except TypeError:  # unhashable: not a math function
        return None
    return None if math_name is None else f"math.{math_name}"


def _named_values(fn_obj) -> list[tuple[str, object]]:
    """``(name, value)`` of every global or closure name ``fn_obj``'s code refers to, sorted
    by name (values looked up in its globals and closure; absent names give None); after a
    module (not warp_lab's), ``("module.attr", value)`` of each of its attributes named
    like a name the code refers to (``cfg.N``, ``helpers.f``), as the front end reads
    ``module.attr``."""
    namespace = {**fn_obj.globals, **fn_obj.closure}
    code = fn_obj.fn.__code__
    names = sorted(_names(code) | set(code.co_freevars))
    out = []
    for name in names:
        _add_named(out, name, namespace.get(name), names, ())
    return out


def _add_named(out: list, path: str, value, names: list[str], modules: tuple) -> None:
    """Append ``(path, value)`` to ``out`` and, for a module (not warp_lab's, nor one of
    ``modules``, those ``path`` passed through: ``a.b.a``), its attributes named like
    ``names`` in turn, at any depth, as the front end reads ``pkg.sub.N``
    (``static_resolve`` follows modules attribute by attribute)."""
    out.append((path, value))
    if isinstance(value, types.ModuleType) and not value.__name__.startswith("warp_lab") \
            and not any(value is m for m in modules):
        for attr in names:
            _add_named(out, f"{path}.{attr}", _module_attribute(value, attr), names,
                       modules + (value,))


def _module_attribute(module, attr: str):
    """``module.attr``, or None when it has none or its own ``__getattr__`` raises: the
    front end evaluates it again and reports that at the kernel's line (a raw traceback out
    of the cache key, before compiling, would hide where)."""
    try:
        return getattr(module, attr, None)
    except Exception:  # noqa: BLE001 - the user's code; the front end reports it
        return None


def _functions(kernel, _seen=None) -> list:
    """``kernel`` and every ``@wl.func`` it names, recursively, each once, in the order
    :func:`fingerprint` visits them (depth first, names sorted)."""
    seen = _seen if _seen is not None else set()
    if id(kernel) in seen:
        return []
    seen.add(id(kernel))
    out = [kernel]
    for _, value in _named_values(kernel):
        if isinstance(value, Func):
            out += _functions(value, seen)
    return out


def _ptx_safe(name: str) -> bool:
    """Whether ``name`` reaches PTX ``.file`` and SASS ``//## File`` as written: printable
    ASCII without ``"`` or ``\\``. LLVM writes any other byte of a ``DIFile`` name as a C
    escape (``\\"``, ``\\320``), which ptxas refuses (``"`` ends its string: "Parsing error
    near ...") or keeps escaped, so no view, finding or trap message could name the file."""
    return all(" " <= c <= "~" and c not in '"\\' for c in name)


def _ascii_name(name: str) -> str:
    """A function name as :func:`_ptx_safe` text: itself when ASCII, else its IDNA-style
    punycode (``ключ`` -> ``xn--h1acbxfam``, never an identifier of its own); any
    character but letters, digits, ``_``, ``-`` and ``$`` becomes ``_``."""
    text = name if name.isascii() else "xn--" + name.encode("punycode").decode("ascii")
    # (a __name__ set by hand may hold any character: a quote or a newline stays out)
    return "".join(c if c.isalnum() or c in "_-$" else "_" for c in text)


def artifact_files(kernel) -> dict[str, str]:
    """The file names a compile of ``kernel`` writes into its artifacts, where not its own.

    A cell's name changes each time the same cell runs (``<cell 3>`` then
    ``<cell 4>``; ipykernel's ``/tmp/ipykernel_<pid>/<hash>.py`` with each kernel
    process), and the name is compiled into the debug info: the LLVM ``DIFile``,
    PTX ``.file``, the cubin's line table, SASS ``//## File``, debug-mode trap
    messages. So every cell file (:func:`~warp_lab.lang.kernel.is_cell_file`)
    among the kernel's and its device functions' sources is compiled under a
    name derived from its content instead: ``<cell of NAME>``, NAME the first
    function :func:`fingerprint` visits in it (the kernel for its own cell), with
    `` #2``, `` #3`` added should two cells of one compile give the same name.
    A real file whose path PTX cannot carry (:func:`_ptx_safe`: a ``"``, a
    backslash, a non-ASCII letter or a control character in it) is compiled as
    ``<file of NAME>`` likewise, and a non-ASCII NAME is written in punycode
    (:func:`_ascii_name`).
    The cache key holds these names, not the cells', so running the same cell
    again is a hit; ``CompiledKernel.source_map.cells`` maps them back to the cells
    of the current run (and the files), and views, findings and errors show those.

    Returns:
        ``{cell or file name: artifact name}`` for the cells and the files PTX cannot
        name; any other file keeps its path.
    """
    out: dict[str, str] = {}
    taken: set[str] = set()
    for fn_obj in _functions(kernel):
        filename = fn_obj.source.filename
        if filename in out:
            continue
        kind = "cell" if is_cell_file(filename) else None if _ptx_safe(filename) else "file"
        if kind is None:
            continue
        base = f"<{kind} of {_ascii_name(fn_obj.name)}"
        name, k = base + ">", 1
        while name in taken:
            k += 1
            name = f"{base} #{k}>"
        out[filename] = name
        taken.add(name)
    return out


def fingerprint(kernel, files: dict[str, str] | None = None, _seen=None) -> list[str]:
    """Everything in ``kernel``'s source and namespace that its code depends on.

    Names the code refers to (global names and closure variables) are
    looked up in its globals and closure:
    device functions are fingerprinted recursively; numbers, tuples, numpy
    scalars and ``wl.constant`` values by ``repr``; for a module, the
    attributes of it that the code names (``math.pi``, ``cfg.N``). A notebook
    cell's file name stands as its :func:`artifact_files` name (``files``,
    computed when None).
    """
    files = artifact_files(kernel) if files is None else files
    seen = _seen if _seen is not None else set()
    if id(kernel) in seen:
        return []
    seen.add(id(kernel))
    src = kernel.source
    filename = files.get(src.filename, src.filename)
    # the dialect (Python's or Warp's / and %) changes the code of the same text
    parts = [f"{type(kernel).__name__}:{getattr(kernel, 'dialect', 'python')}:{filename}:"
             f"{src.first_line}:{src.col_offset}",
             src.text, repr(sorted((k, repr(v)) for k, v in kernel.fn.__annotations__.items()))]
    if getattr(kernel.fn, "__defaults__", None):  # a @wl.func's defaults, as the def saw them
        parts.append(f"defaults={kernel.fn.__defaults__!r}")
    for name, value in _named_values(kernel):
        if isinstance(value, Func):
            for f in getattr(value, "overloads", (value,)):   # every overload of a name
                parts += fingerprint(f, files, seen)
        elif (text := _value_text(value)) is not None:
            parts.append(f"{name}={text}")
    return parts


@functools.lru_cache(maxsize=1)
def compiler_sources_hash() -> str:
    """SHA-256 of warp_lab's language and compiler sources (computed once per process)."""
    h = hashlib.sha256()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for sub in ("lang", "compiler"):
        folder = os.path.join(root, sub)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                with open(os.path.join(folder, name), "rb") as f:
                    h.update(name.encode() + b"\0" + f.read())
    return h.hexdigest()


def cache_key(kernel, options: CompileOptions, toolchain: dict,
              files: dict[str, str] | None = None) -> str:
    """SHA-256 hex digest identifying one compile (``files``: :func:`artifact_files`, computed
    when None)."""
    h = hashlib.sha256()
    for part in [f"format={_FORMAT}", compiler_sources_hash(), *fingerprint(kernel, files),
                 json.dumps(dataclasses.asdict(options), sort_keys=True),
                 json.dumps(toolchain, sort_keys=True)]:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def cache_dir() -> str:
    """The per-user cache folder (created on first write), an absolute path.

    ``$WARP_LAB_CACHE_DIR`` when set (``~`` expanded: a value set from Python, as in a
    notebook's ``os.environ[...] = "~/wl"``, is not expanded by a shell, and made a folder
    named ``~`` in the working folder; a relative path is taken from the working folder
    of the first compile), else ``$XDG_CACHE_HOME/warp_lab`` when that is absolute, else
    ``~/.cache/warp_lab``: the XDG Base Directory Specification has a relative
    ``$XDG_CACHE_HOME`` ignored ("all paths set in these environment variables must be
    absolute"), which otherwise put the cache into whatever folder a notebook runs in.
    """
    own = os.environ.get("WARP_LAB_CACHE_DIR")
    if own:
        return os.path.abspath(os.path.expanduser(own))
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "warp_lab")


def foreign_folder(directory: str) -> str | None:
    """Why the cache folder ``directory`` is not the user's own (None when it is, or when
    it does not exist yet: :meth:`KernelCache.put` creates it with mode 0700).

    An entry's digest (:func:`_digest`) tells a damaged entry from a whole one, but anyone
    who can write into the folder can write a whole entry, digest and all, with other PTX
    under a kernel's key (the key is computable from the kernel's source): the views
    would show it and a launch would run it. So a folder another user owns, or one that
    its group or other users may write into (mode bits 022, as a shared ``/tmp`` folder),
    is not used (POSIX ``stat``: ``st_uid``, ``st_mode``). Without ``os.getuid`` (Windows)
    only the mode is looked at. The cache itself looks at the folder it opened
    (:func:`_open_folder`), not at the path, so that a folder swapped in after the look is
    never read.
    """
    try:
        st = os.stat(directory)
    except OSError:
        return None
    return _foreign(st, directory)


def _foreign(st: os.stat_result, directory: str) -> str | None:
    """:func:`foreign_folder`'s verdict for a folder whose ``stat`` is ``st``."""
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a folder"
    uid = os.getuid() if hasattr(os, "getuid") else st.st_uid
    if st.st_uid != uid:
        return f"it belongs to another user (uid {st.st_uid}, you are {uid})"
    if st.st_mode & 0o022:
        return (f"other users may write into it (mode {stat.S_IMODE(st.st_mode):o}; "
                f"chmod go-w {directory} if it is yours alone)")
    return None


#: whether entries can be opened relative to the folder's descriptor (POSIX ``openat``,
#: ``renameat``, ``unlinkat``); without (Windows) they are opened by path
_DIR_FD = {os.open, os.rename, os.unlink} <= os.supports_dir_fd
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class _Folder:
    """The cache folder, opened once for one get or put (:func:`_open_folder`): every
    entry is opened, created, renamed and removed relative to its descriptor (``dir_fd``),
    never by a path through the folder's name, which another user who may write the
    folder's parent (a team folder with no sticky bit) could point elsewhere meanwhile.
    A context manager that closes the descriptor."""

    def __init__(self, directory: str, fd: int | None):
        self.directory = directory
        self.fd = fd

    def path(self, name: str) -> str:
        """``name`` as :func:`os.open` and friends take it with :meth:`kw`."""
        return name if self.fd is not None else os.path.join(self.directory, name)

    def kw(self) -> dict:
        return {"dir_fd": self.fd} if self.fd is not None else {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _open_folder(directory: str) -> tuple[_Folder | None, str | None]:
    """Open the cache folder and check what was opened: ``(folder, None)``, or ``(None,
    why)`` when it is not the user's own (:func:`_foreign` of the descriptor's ``fstat``:
    a link to another user's folder, or a folder swapped in for the checked one, is what
    is looked at), or ``(None, None)`` when it does not exist (or cannot be opened).

    The folder's own name may be a symbolic link (a cache folder moved to a bigger
    disk): the folder it leads to is the one checked and used."""
    if not _DIR_FD:
        why = foreign_folder(directory)
        return (None, why) if why is not None or not os.path.isdir(directory) else \
            (_Folder(directory, None), None)
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
    except OSError:
        return None, None
    try:
        why = _foreign(os.fstat(fd), directory)
    except OSError:
        why = "it cannot be looked at"
    if why is not None:
        os.close(fd)
        return None, why
    return _Folder(directory, fd), None


# -- (de)serialising types without pickle ---------------------------------------------

def _type_to_json(t) -> object:
    if isinstance(t, T.PointerType):
        return {"pointer": _type_to_json(t.dtype), "const": t.const, "spelling": t.spelling}
    if isinstance(t, T.CudaVector):   # a CUDA vector type (float4, __half2)
        return {"vector": t.elem.name, "n": t.n, "name": t.name}
    if isinstance(t, T.ArrayType):
        return {"array": _type_to_json(t.dtype), "ndim": t.ndim, "space": t.space,
                "shape": list(t.shape) if t.shape else None}
    if isinstance(t, T.StructType):
        return {"struct": t.name, "key": t.key,
                "fields": [[f, _type_to_json(ft)] for f, ft in t.fields]}
    return t.name


def _type_from_json(obj):
    if isinstance(obj, dict) and "pointer" in obj:
        return T.PointerType(_type_from_json(obj["pointer"]), obj["const"], obj["spelling"])
    if isinstance(obj, dict) and "struct" in obj:
        return T.StructType(obj["struct"], tuple((f, _type_from_json(ft))
                                                 for f, ft in obj["fields"]), obj["key"])
    if isinstance(obj, dict) and "vector" in obj:
        return T.CudaVector(T.SCALARS[obj["vector"]], obj["n"], obj["name"])
    if isinstance(obj, dict):
        shape = tuple(obj["shape"]) if obj["shape"] else None
        return T.ArrayType(_type_from_json(obj["array"]), obj["ndim"], obj["space"], shape)
    return T.element_type(obj)


def _to_json(ck: CompiledKernel) -> dict:
    return {
        "format": _FORMAT, "name": ck.name, "entry": ck.entry,
        "source": dataclasses.asdict(ck.source), "options": dataclasses.asdict(ck.options),
        "params": [[n, _type_to_json(t)] for n, t in ck.params], "launch_ndim": ck.launch_ndim,
        "entry_guard": ck.entry_guard, "written_params": list(ck.written_params),
        "llvm_ir": ck.llvm_ir, "llvm_ir_optimized": ck.llvm_ir_optimized, "ptx": ck.ptx,
        "sass": ck.sass, "life_ranges": ck.life_ranges, "has_cubin": ck.cubin is not None,
        "resources": dataclasses.asdict(ck.resources) if ck.resources else None,
        "source_map": ck.source_map.to_json(),
        "timings": dict(ck.timings), "missing": dict(ck.missing),
        "toolchain": dict(ck.toolchain), "cache_key": ck.cache_key,
        "files": dict(ck.source_map.cells),
        "language": ck.language,
        "dialect": ck.dialect,
    }


#: the JSON type of each field of an entry (``_to_json``'s dict; None where a compile may
#: lack the stage: no LLVM IR for CUDA C++, no SASS before nvdisasm ran, no resources
#: without ptxas); anything else is no entry this cache wrote, though its digest be valid:
#: the record constructors do not check types, and a ``"timings": null`` failed only at
#: the cache hit's ``{**hit.timings}``
_FIELD_TYPES = {
    "name": (str,), "entry": (str,), "ptx": (str,), "language": (str,), "dialect": (str,),
    "llvm_ir": (str, type(None)), "llvm_ir_optimized": (str, type(None)),
    "sass": (str, type(None)), "life_ranges": (str, type(None)),
    "source": (dict,), "options": (dict,), "resources": (dict, type(None)),
    "timings": (dict,), "missing": (dict,), "toolchain": (dict,), "files": (dict,),
    "params": (list,), "written_params": (list,), "launch_ndim": (int,),
    "entry_guard": (bool,), "has_cubin": (bool,),
}


def _check_fields(d: dict) -> None:
    """Raise TypeError unless every field of :data:`_FIELD_TYPES` present in ``d`` has its
    JSON type (``launch_ndim`` an int, not a bool), the timings are numbers and the
    toolchain's and missing tools' entries are text (or lists of text)."""
    for key, types in _FIELD_TYPES.items():
        if key in d and (not isinstance(d[key], types) or
                         (types == (int,) and isinstance(d[key], bool))):
            raise TypeError(f"cache entry field {key!r} is {type(d[key]).__name__}")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool)
               for v in d.get("timings", {}).values()):
        raise TypeError("cache entry timings are not all numbers")
    for key in ("toolchain", "missing"):    # (a CUDA C++ toolchain lists its header folders)
        if not all(isinstance(v, str) or (isinstance(v, list) and
                                          all(isinstance(x, str) for x in v))
                   for v in d.get(key, {}).values()):
            raise TypeError(f"cache entry {key} values are not all text")


def _from_json(d: dict, cubin: bytes | None) -> CompiledKernel:
    """The artifact of a parsed disk entry ``d`` (``_to_json``'s dict) and its cubin.

    Raises:
        TypeError: a field of another JSON type than :data:`_FIELD_TYPES` says; KeyError,
            TypeError, ValueError...: what the record constructors raise for other wrong
            fields (``get`` takes any of them as a miss).
    """
    _check_fields(d)
    params = tuple((n, _type_from_json(t)) for n, t in d["params"])
    source = Source(**d["source"])
    return CompiledKernel(
        name=d["name"], entry=d["entry"], source=source,
        options=CompileOptions(**d["options"]), params=params,
        param_layout=abi.param_layout(params, hidden=d.get("language", "python") == "python"),
        launch_ndim=d["launch_ndim"], language=d.get("language", "python"),
        llvm_ir=d["llvm_ir"], llvm_ir_optimized=d["llvm_ir_optimized"], ptx=d["ptx"],
        cubin=cubin, sass=d["sass"], life_ranges=d["life_ranges"],
        resources=Resources(**d["resources"]) if d["resources"] else None,
        source_map=SourceMap.from_json(d["source_map"], source.filename, d["files"]),
        timings=d["timings"], missing=d["missing"], toolchain=d["toolchain"],
        cache_key=d["cache_key"], entry_guard=d["entry_guard"],
        written_params=tuple(d["written_params"]),
        dialect=d.get("dialect", "python"))


#: an entry file begins with these bytes and the digest's 64 hex digits (json.dumps of a
#: dict whose first key is "digest"): the digest is found without parsing the file
_DIGEST_HEAD = b'{"digest": "'
_DIGEST_SPAN = slice(len(_DIGEST_HEAD), len(_DIGEST_HEAD) + 64)
_NO_DIGEST = b"0" * 64


def _digest(entry: bytes, cubin: bytes | None) -> str:
    """SHA-256 of a disk entry: the bytes of its ``.json`` file with the digest's own 64
    digits as zeros, and its cubin. A ``get`` whose digest differs is a miss, so an entry
    truncated, edited by hand, or whose ``.cubin`` another process replaced by a different
    compile's, is rebuilt instead of loaded (a cubin cut short would fail only at
    ``cuModuleLoadData`` on a GPU, a ``"registers": "many"`` only in the views). Hashing
    the file's bytes, not the parsed entry serialised again, keeps a disk hit at one
    parse (0.1 ms for saxpy to 2.6 ms for math_f64 less than re-serialising)."""
    h = hashlib.sha256(entry[:_DIGEST_SPAN.start] + _NO_DIGEST + entry[_DIGEST_SPAN.stop:])
    h.update(b"\0" if cubin is None else b"\1" + cubin)
    return h.hexdigest()


#: the most bytes an entry's ``.json`` or ``.cubin`` file may hold: a bigger one is no
#: entry this cache wrote (the JSON of a 10,000-line kernel, every view of it, is ~15 MB)
#: and is not read (an 8 GiB sparse file raised MemoryError out of wl.compile)
MAX_FILE_BYTES = 256 << 20


def _read_regular(folder: _Folder, name: str) -> bytes:
    """The bytes of the regular file ``name`` of ``folder``, which must not be a symbolic
    link nor bigger than :data:`MAX_FILE_BYTES`.

    The cache writes its entries as regular files (:meth:`KernelCache._atomic_write`), so
    anything else in their place is no entry of its own: a FIFO (``open`` would wait for
    a writer forever), a link to ``/dev/zero`` or ``/dev/stdin`` (a read that never ends),
    a folder. Opened relative to the folder's descriptor, without following a link
    (``O_NOFOLLOW``) and without blocking (``O_NONBLOCK``, which a regular file's reads
    ignore), then checked with ``fstat`` (its type and size, before a byte is read;
    POSIX ``openat``, ``fstat``).

    Raises:
        OSError: ``name`` is missing, a link, not a regular file, or too big (a miss for
            ``get``).
    """
    flags = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) \
        | getattr(os, "O_BINARY", 0) | _CLOEXEC
    fd = os.open(folder.path(name), flags, **folder.kw())
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{name} is not a regular file")
        if st.st_size > MAX_FILE_BYTES:
            raise OSError(f"{name} holds {st.st_size} bytes, more than an entry")
        with os.fdopen(fd, "rb", closefd=False) as f:
            # the size fstat gave, and one byte more: a file that grew since is no entry
            # (the cache replaces entries by rename; it never appends). read(n) allocates
            # its n bytes first: read(MAX_FILE_BYTES + 1) took 256 MiB for every entry
            data = f.read(st.st_size + 1)
        if len(data) > st.st_size:
            raise OSError(f"{name} grew while it was read")
        return data
    finally:
        os.close(fd)


def _read_cubin(folder: _Folder, name: str) -> bytes | None:
    """The entry's ``.cubin`` bytes, or None when there is none (a miss when it is there
    but not a regular file or too big: :func:`_read_regular`)."""
    try:
        return _read_regular(folder, name)
    except FileNotFoundError:
        return None


class KernelCache:
    """Memory + disk cache of :class:`CompiledKernel` by :func:`cache_key`.

    Args:
        directory: disk folder, None for memory only.
        max_memory_entries: LRU bound of the in-memory part.
    """

    def __init__(self, directory: str | None, max_memory_entries: int = 256):
        self.directory = directory
        self._memory: OrderedDict[str, CompiledKernel] = OrderedDict()
        self._max = max_memory_entries
        self._lock = threading.Lock()
        self._refused: str | None = None   # why the folder is not used (foreign_folder)

    def _folder(self, create: bool = False) -> _Folder | None:
        """The disk folder, opened and checked (:func:`_open_folder`), or None when there is
        none to use: unset, missing (made first, mode 0700, with ``create``), or not the
        user's own (a warning the first time, :func:`foreign_folder`)."""
        if not self.directory:
            return None
        if create:
            try:
                os.makedirs(self.directory, mode=0o700, exist_ok=True)
            except OSError:
                return None
        folder, why = _open_folder(self.directory)
        if why is not None and why != self._refused:
            warnings.warn(f"warp_lab: not using the compile cache folder {self.directory}: "
                          f"{why}; compiles are cached in memory only (set "
                          "WARP_LAB_CACHE_DIR to a folder of your own)", stacklevel=4)
        self._refused = why
        return folder

    def get(self, key: str) -> CompiledKernel | None:
        """The cached artifact, or None (a miss).

        A disk entry is read from the folder opened once for this look (:class:`_Folder`),
        both its files relative to that descriptor; it is a miss when the folder is not
        the user's own (:func:`foreign_folder`), when a file is missing, not a regular file
        or bigger than :data:`MAX_FILE_BYTES` (:func:`_read_regular`), when its digest
        (:func:`_digest`, checked before the JSON is parsed) differs, and when its JSON
        does not make an artifact (too deeply nested, wrong fields: anything the parse or
        the record's constructors raise).
        """
        with self._lock:
            if key in self._memory:
                self._memory.move_to_end(key)
                return self._memory[key]
        folder = self._folder()
        if folder is None:
            return None
        with folder:
            try:
                entry = _read_regular(folder, key + ".json")
                if not entry.startswith(_DIGEST_HEAD):
                    return None
                cubin = _read_cubin(folder, key + ".cubin")
            except OSError:
                return None
        try:
            digest = entry[_DIGEST_SPAN].decode("ascii")
        except UnicodeDecodeError:
            return None
        if digest != _digest(entry, cubin):
            if cubin is None or digest != _digest(entry, None):
                return None     # truncated, edited, or another compile's cubin
            cubin = None        # (a stray .cubin beside an entry that has none)
        try:
            d = json.loads(entry)
            if not isinstance(d, dict) or d.get("format") != _FORMAT \
                    or d.get("cache_key") != key or bool(d["has_cubin"]) != (cubin is not None):
                return None
            ck = _from_json(d, cubin)
        except Exception:  # noqa: BLE001 - bytes from disk: whatever they raise is a miss
            return None     # (RecursionError for 200,000 nested lists, AttributeError, ...)
        self._remember(key, ck)
        return ck

    def put(self, key: str, ck: CompiledKernel) -> None:
        """Store ``ck``; disk write failures (read-only home, full disk) are ignored.

        The folder is opened once (made first if missing) and checked
        (:meth:`_folder`); both files are written relative to it."""
        self._remember(key, ck)
        if not self.directory:
            return
        folder = self._folder(create=True)
        if folder is None:
            return
        with folder:
            try:
                if ck.cubin is not None:
                    self._atomic_write(folder, key + ".cubin", ck.cubin)
                entry = json.dumps({"digest": _NO_DIGEST.decode(), **_to_json(ck)}).encode()
                digest = _digest(entry, ck.cubin).encode()
                entry = entry[:_DIGEST_SPAN.start] + digest + entry[_DIGEST_SPAN.stop:]
                self._atomic_write(folder, key + ".json", entry)
            except OSError:
                pass

    def clear(self) -> None:
        """Forget the in-memory entries (disk entries stay)."""
        with self._lock:
            self._memory.clear()

    def remove_all(self) -> int:
        """Forget every entry: the in-memory ones and this cache's files in its folder.

        What ``wp.clear_kernel_cache()`` does (Warp's empties its kernel cache folder).
        Only the files this cache writes are removed (``<SHA-256>.json``/``.cubin``, and
        the temporary files of an interrupted write: :data:`_ENTRY_NAME`), each relative
        to the folder's descriptor; no other file, nothing in a subfolder, and nothing in
        a folder that is not the user's own (:func:`foreign_folder`). Another process
        meanwhile sees a miss, or an entry it wrote after the removal.

        Returns:
            the number of files removed (int).
        """
        self.clear()
        folder = self._folder()
        if folder is None:
            return 0
        removed = 0
        with folder:
            try:
                names = os.listdir(folder.fd if folder.fd is not None else folder.directory)
            except OSError:
                return 0
            for name in names:
                if _ENTRY_NAME.fullmatch(name):
                    with contextlib.suppress(OSError):  # (gone meanwhile: removed by another)
                        os.unlink(folder.path(name), **folder.kw())
                        removed += 1
        return removed

    def _remember(self, key, ck):
        with self._lock:
            self._memory[key] = ck
            self._memory.move_to_end(key)
            while len(self._memory) > self._max:
                self._memory.popitem(last=False)

    @staticmethod
    def _atomic_write(folder: _Folder, name: str, data: bytes):
        """Write ``name`` in ``folder`` whole or not at all (a reader in another process
        never sees half a file): a new temporary file (``O_CREAT | O_EXCL | O_NOFOLLOW``,
        mode 0600) renamed over it, both relative to the folder's descriptor; the
        temporary file is removed when the write fails (a full disk)."""
        tmp = f".tmp-{os.getpid()}-{secrets.token_hex(8)}"
        fd = os.open(folder.path(tmp), os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
                     | getattr(os, "O_BINARY", 0) | _CLOEXEC, 0o600, **folder.kw())
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            if folder.fd is not None:   # (POSIX rename replaces a file atomically)
                os.rename(tmp, name, src_dir_fd=folder.fd, dst_dir_fd=folder.fd)
            else:
                os.replace(folder.path(tmp), folder.path(name))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(folder.path(tmp), **folder.kw())
            raise


#: the names of the files a cache writes in its folder: entries (:func:`cache_key`'s
#: SHA-256 hex digest) and the temporary files of :meth:`KernelCache._atomic_write`
_ENTRY_NAME = re.compile(r"[0-9a-f]{64}\.(?:json|cubin)|\.tmp-[0-9]+-[0-9a-f]{16}")

_default = None


def default_cache() -> KernelCache:
    """The process-wide cache (disk folder from :func:`cache_dir`)."""
    global _default
    if _default is None:
        _default = KernelCache(cache_dir())
    return _default
