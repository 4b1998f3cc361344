"""Runs every generator and writes onion/_generated (at import, when its inputs changed).

The inputs are the YAMLs, the generator's own source, and what codegen reads of the
kernels (their names and the ufunc formulas' declarations, see ``native_index``), so
editing a kernel's body does not regenerate.  Several processes may import a stale
checkout at once: one regenerates under a file lock while the others wait; each file
is written to a unique temporary name and moved into place, and the hash that marks
the output fresh is written last.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)
OUT = os.path.join(PKG, "_generated")
YAML = os.path.join(PKG, "aten", "native_functions.yaml")
DERIVATIVES = os.path.join(PKG, "aten", "derivatives.yaml")
AUTOCAST_POLICY = os.path.join(PKG, "aten", "autocast_policy.yaml")
HASH_FILE = os.path.join(OUT, "_inputs.sha256")
SELECTION_FILE = os.path.join(OUT, "selected_operators.yaml")     # the kept selection of a selective build
LOCK_FILE = os.path.join(OUT, ".lock")


def _inputs() -> list:
    files = [YAML, DERIVATIVES, AUTOCAST_POLICY]
    if os.path.exists(SELECTION_FILE):      # a selective build: its selection is an input like the YAML
        files.append(SELECTION_FILE)
    files += [os.path.join(HERE, f) for f in sorted(os.listdir(HERE)) if f.endswith(".py")]
    return files


def _watched() -> list:
    """Every file whose change may change the output: the inputs and the sources ``native_index`` reads."""
    from .native_index import BACKWARD_HELPERS_FILE, NATIVE_DIR
    native = [os.path.join(NATIVE_DIR, f) for f in sorted(os.listdir(NATIVE_DIR)) if f.endswith(".py")]
    helpers_dir = os.path.dirname(BACKWARD_HELPERS_FILE)
    helpers = [os.path.join(helpers_dir, f) for f in sorted(os.listdir(helpers_dir)) if f.startswith("backward_")]
    return _inputs() + native + [BACKWARD_HELPERS_FILE] + helpers + _selection_sources()


def _selection_sources() -> list:
    """A selective build's closure reads the kernels' bodies: then they are inputs too (none otherwise)."""
    if not os.path.exists(SELECTION_FILE):
        return []
    from .selection import closure_sources
    return closure_sources()


def stat_signature() -> str:
    """Sizes and modification times of the watched files: a cheap first test of freshness (no parsing)."""
    parts = []
    for f in _watched():
        st = os.stat(f)
        parts.append(f"{f}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def inputs_hash() -> str:
    from .native_index import fingerprint
    h = hashlib.sha256()
    for f in _inputs():
        with open(f, "rb") as fh:
            h.update(os.path.relpath(f, PKG).encode() + b"\0" + fh.read())
    h.update(fingerprint().encode())
    for f in _selection_sources():
        with open(f, "rb") as fh:
            h.update(os.path.relpath(f, PKG).encode() + b"\0" + fh.read())
    return h.hexdigest()


def _read_hash() -> str:
    """The inputs hash the output was generated from (first line of the hash file)."""
    return _read_marks()[0]


def _read_marks() -> tuple:
    """(inputs hash, stat signature) recorded with the output; empty strings when missing."""
    try:
        with open(HASH_FILE) as f:
            lines = f.read().split()
    except OSError:
        return "", ""
    return (lines + ["", ""])[0], (lines + ["", ""])[1]


def _write_marks(content_hash: str) -> None:
    _write(HASH_FILE, f"{content_hash}\n{stat_signature()}\n")


def is_stale() -> bool:
    return _read_hash() != inputs_hash()


def _write(path: str, text: str) -> None:
    """Write ``text`` to ``path`` atomically: a unique temporary file in the same folder, then rename."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _locked(out_dir: str):
    os.makedirs(out_dir, exist_ok=True)
    try:
        import fcntl
    except ImportError:          # no flock (Windows): one process at a time is the user's business
        yield
        return
    with open(os.path.join(out_dir, ".lock"), "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def render(yaml_path: str = YAML, selection_path: str | None = None) -> dict:
    """{file name: source} of every generated module (nothing is written); ``selection_path``: a
    selected-operators YAML (``onion/codegen/selection.py``) for a selective build."""
    from .derivatives import gen_nodes, load_derivatives
    from .gen_autocast import gen_autocast
    from .gen_autograd import gen_register_autograd
    from .gen_operators import gen_operators
    from .gen_pyi import gen_pyi
    from .gen_python import gen_functions, gen_methods
    from .gen_registrations import gen_registrations
    from .model import load_native_functions
    from .native_index import backward_helper_names, kernel_names, keyset_kernels, ufunc_formulas

    fns = load_native_functions(yaml_path)
    sibling = os.path.join(os.path.dirname(yaml_path), "derivatives.yaml")   # none beside it: no formulas
    derivs = load_derivatives(sibling, {f.name: f for f in fns}, backward_helper_names()) \
        if os.path.exists(sibling) else {}
    all_fns, selective = fns, None
    if selection_path is not None:
        from .selection import load_selection, selective_outputs, selected_functions
        sel = load_selection(selection_path)
        if not sel.is_all:
            fns, selective = selected_functions(fns, sel, sibling)
            derivs = {k: v for k, v in derivs.items() if k in selective.kept}
    nodes_src, plans = gen_nodes(derivs)
    registrations = gen_registrations(fns, kernel_names(), ufunc_formulas(), keyset_kernels())
    registrations["register_autograd.py"] = gen_register_autograd(fns, plans, derivs)
    policy = os.path.join(os.path.dirname(yaml_path), "autocast_policy.yaml")    # none beside it: no kernels
    if os.path.exists(policy):
        registrations.update(gen_autocast(fns, policy))
    outputs = {
        "operators.py": gen_operators(fns),
        "autograd_nodes.py": nodes_src,
        **registrations,
        "python_functions.py": gen_functions(fns),
        "tensor_methods.py": gen_methods(fns),
        **gen_pyi(all_fns),
    }
    if selective is not None:
        outputs.update(selective_outputs(all_fns, selective, outputs))
        registrations["register_selected_dtypes.py"] = outputs["register_selected_dtypes.py"]
    modules = sorted(n[:-3] for n in registrations)
    outputs["__init__.py"] = (
        '"""Generated by `python -m onion.codegen`; not committed.  Read a call in this order:\n'
        "python_functions / tensor_methods (bindings) -> operators (entries, Dispatcher) -> register_autograd\n"
        '-> register_<backend> (kernels) -> onion/aten (helpers) -> NumPy."""\n'
        "# the registration modules, each with the device type it needs (None: always loaded)\n"
        "REGISTRATIONS = {\n" + "".join(
            f"    {m!r}: {_needs(m)!r},\n" for m in modules) + "}\n")
    return outputs


def _needs(module: str):
    """Device type a registration module needs loaded (CUDA kernels only when CuPy is there, PrivateUse2's
    when the Dask backend is imported: onion/backends/dask.py loads them)."""
    return {"register_cuda": "cuda", "register_privateuse2": "dask"}.get(module)


def generate(yaml_path: str = YAML, out_dir: str = OUT) -> list:
    selection = SELECTION_FILE if out_dir == OUT else os.path.join(out_dir, "selected_operators.yaml")
    outputs = render(yaml_path, selection if os.path.exists(selection) else None)
    os.makedirs(out_dir, exist_ok=True)
    keep = set(outputs) | {"_inputs.sha256", ".lock"}
    for name in os.listdir(out_dir):          # files an older generator wrote
        if name.endswith((".py", ".pyi")) and name not in keep:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(out_dir, name))
    for name, text in outputs.items():
        _write(os.path.join(out_dir, name), text)
    if out_dir == OUT:
        _compile_bytecode()
        # written last: marks the whole output fresh (a build from another YAML never is)
        if os.path.abspath(yaml_path) == os.path.abspath(YAML):
            _write_marks(inputs_hash())
        else:
            _write(HASH_FILE, "other-yaml\n")
    return sorted(outputs)


def _compile_bytecode() -> None:
    """Write bytecode for the package now, so that imports do not compile every module each time when
    Python is told not to write it (PYTHONDONTWRITEBYTECODE, read-only installs)."""
    import compileall
    with contextlib.suppress(OSError):
        compileall.compile_dir(PKG, quiet=1, workers=1)


def regenerate(select: str | None = None) -> list:
    """``python -m onion.codegen [--select FILE|all]``: generate now, waiting for any importer that is
    generating.  ``select``: a selection file to build from (kept as ``SELECTION_FILE``), or ``"all"`` to
    drop the kept selection; None keeps whatever selection the last build had."""
    with _locked(OUT):
        if select == "all":
            with contextlib.suppress(FileNotFoundError):
                os.unlink(SELECTION_FILE)
            return generate()
        if select is None:
            return generate()
        from .selection import COPIED_FROM, load_selection
        load_selection(select)                     # a bad file fails here, keeping the current build
        previous = None
        with contextlib.suppress(FileNotFoundError), open(SELECTION_FILE) as f:
            previous = f.read()
        with open(select) as f:
            _write(SELECTION_FILE, f"{COPIED_FROM}{os.path.abspath(select)}\n" + f.read())
        try:
            return generate()
        except BaseException:                      # the selection did not build: back to the one we had
            if previous is None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(SELECTION_FILE)
            else:
                _write(SELECTION_FILE, previous)
            raise


def ensure_generated() -> None:
    """Regenerate if stale; safe when several processes import at once."""
    if os.environ.get("ONION_SKIP_CODEGEN") == "1" and os.path.exists(os.path.join(OUT, "operators.py")):
        return
    recorded, recorded_stats = _read_marks()
    if recorded and recorded_stats == stat_signature():
        return                          # nothing watched was touched since the last generation
    want = inputs_hash()
    if recorded == want:                # touched, not changed in what codegen reads (a kernel's body)
        with contextlib.suppress(OSError):
            _write_marks(want)
        return
    with _locked(OUT):
        if _read_hash() != want:      # another process may have finished while we waited
            generate()
