"""``python -m onion ops``: onion's operators against PyTorch 2.13's, with what each has.

PyTorch's list is read from the ``native_functions.yaml`` that the installed ``torchgen`` package
ships (with ``yaml.safe_load``: reading it runs nothing); without torchgen only onion's side is shown.
A column says whether an operator has a kernel for the key, directly or through an alias key that
covers it (CompositeImplicitAutograd covers all three; CompositeExplicitAutograd the backends).
"""
from __future__ import annotations

import dataclasses
import importlib.util
import os

from .core.dispatch_key import K
from .dispatch.dispatcher import dispatcher

_BACKEND_ALIASES = (K.CompositeImplicitAutograd, K.CompositeExplicitAutograd, K.CompositeExplicitAutogradNonFunctional)


@dataclasses.dataclass(frozen=True)
class OpRow:
    """One overload: its name (``add.Tensor``) and where it can run."""
    name: str
    cpu: bool
    meta: bool
    autograd: bool
    core: bool          # tagged ``core`` (Core ATen) by PyTorch, or by onion when PyTorch's list is absent


def onion_rows() -> dict[str, OpRow]:
    """Every ``aten::`` overload onion defines, by ``name.overload``."""
    from . import _load
    _load()
    rows = {}
    for qname, h in dispatcher.ops.items():
        if not qname.startswith("aten::"):
            continue
        keys = set(h.kernels)
        composite = bool(keys & set(_BACKEND_ALIASES))
        rows[qname[len("aten::"):]] = OpRow(
            qname[len("aten::"):],
            cpu=K.CPU in keys or composite,
            meta=K.Meta in keys or composite,
            autograd=bool(keys & {K.Autograd, K.AutogradCPU, K.CompositeImplicitAutograd}),
            core="core" in h.tags)
    return rows


def torch_yaml_path() -> str | None:
    spec = importlib.util.find_spec("torchgen")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "packaged", "ATen", "native",
                        "native_functions.yaml")
    return path if os.path.exists(path) else None


def torch_operators(path: str) -> dict[str, bool]:
    """PyTorch's overloads (``name.overload``) from its native_functions.yaml -> tagged ``core``."""
    import yaml
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path, encoding="utf-8") as f:
        entries = yaml.load(f, Loader=loader)
    out = {}
    for e in entries:
        name = e["func"].split("(", 1)[0].strip()
        tags = e.get("tags", ())
        out[name] = "core" in ((tags,) if isinstance(tags, str) else tuple(tags))
    return out


def render(missing_only: bool = False) -> str:
    rows = onion_rows()
    path = torch_yaml_path()
    theirs = torch_operators(path) if path else None
    yes = {True: "yes", False: "-"}
    lines = []
    if missing_only:
        if theirs is None:
            return "PyTorch's operator list is not available (install torch, which ships torchgen)\n"
        missing = sorted(n for n in theirs if n not in rows)
        lines.append(f"{'operator':<48} core")
        lines += [f"{n:<48} {yes[theirs[n]]}" for n in missing]
        lines.append(f"\n{len(missing)} of PyTorch's {len(theirs)} overloads are missing "
                     f"({sum(theirs[n] for n in missing)} of them Core ATen)")
        return "\n".join(lines) + "\n"
    lines.append(f"{'operator':<48} {'CPU':<4} {'Meta':<4} {'autograd':<8} core")
    for n in sorted(rows):
        r = rows[n]
        core = theirs.get(n, False) if theirs is not None else r.core
        lines.append(f"{n:<48} {yes[r.cpu]:<4} {yes[r.meta]:<4} {yes[r.autograd]:<8} {yes[core]}")
    lines.append("")
    lines.append(f"onion: {len(rows)} overloads ({sum(r.cpu for r in rows.values())} on CPU, "
                 f"{sum(r.meta for r in rows.values())} on Meta, {sum(r.autograd for r in rows.values())} "
                 "with autograd)")
    if theirs is not None:
        shared = [n for n in rows if n in theirs]
        core_total = sum(theirs.values())
        lines.append(f"PyTorch 2.13: {len(theirs)} overloads, {core_total} Core ATen; onion has {len(shared)} of "
                     f"them ({sum(theirs[n] for n in shared)} Core ATen); `--missing` lists the rest")
        extra = sorted(n for n in rows if n not in theirs)
        if extra:
            lines.append(f"onion-only overloads: {', '.join(extra)}")
    return "\n".join(lines) + "\n"
