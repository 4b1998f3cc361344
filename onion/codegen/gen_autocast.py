"""``register_autocast_<device>.py``: the Autocast kernels the policy table (onion/aten/autocast_policy.yaml) asks for.

One short kernel per listed overload that onion declares: it excludes the device's Autocast key, casts the
floating tensor arguments as the policy says (helpers in onion/amp/autocast_mode.py) and calls the operator
again from the top, as PyTorch's ``WrapFunction`` does; the casts themselves run with the key excluded, so
autograd records them and gradients reach float32 leaves in float32.  Listed names onion lacks are skipped.
"""
from __future__ import annotations

import os

import yaml

from .context import CodegenError, Loc, context
from .header import HEADER
from .naming import arg_names
from .pyfmt import fit_all

POLICIES = ("lower_precision_fp", "fp32", "fp32_set_opt_dtype", "fp32_append_dtype", "promote", "banned")
DEVICES = {"cpu": "AutocastCPU", "cuda": "AutocastCUDA"}


class _LineLoader(yaml.SafeLoader):
    """Scalars remember their line, so errors and the generated comments name it."""


def _construct_scalar(loader, node):
    return (loader.construct_scalar(node), node.start_mark.line + 1)


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SCALAR_TAG, _construct_scalar)


def load_policy(path: str) -> dict:
    """{device: [(policy, overload name, target overload or None, Loc)]} in file order."""
    rel = os.path.relpath(path, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(path)))))
    with open(path) as f:
        raw = yaml.load(f, Loader=_LineLoader) or {}
    out: dict = {}
    for (device, line), policies in raw.items():
        loc = Loc(rel, line)
        if device not in DEVICES:
            raise CodegenError(f"{loc}: unknown autocast device '{device}' (expected one of {sorted(DEVICES)})")
        rows = out.setdefault(device, [])
        seen: set = set()
        for (policy, pline), names in (policies or {}).items():
            if policy not in POLICIES:
                raise CodegenError(f"{Loc(rel, pline)}: unknown autocast policy '{policy}' "
                                   f"(expected one of {', '.join(POLICIES)})")
            for text, nline in names or ():
                name, _, target = (s.strip() for s in text.partition("->"))
                if (policy == "fp32_append_dtype") != bool(target):
                    raise CodegenError(f"{Loc(rel, nline)}: '{text}': only fp32_append_dtype names a target "
                                       f"overload ('name -> name_with_dtype'), and it must")
                if name in seen:
                    raise CodegenError(f"{Loc(rel, nline)}: '{name}' is listed twice for {device}")
                seen.add(name)
                rows.append((policy, name, target or None, Loc(rel, nline)))
    return out


def _kind(arg) -> str:
    t = str(arg.type)
    if t in ("Tensor", "Tensor?"):
        return "tensor"
    if t in ("Tensor[]", "Tensor?[]"):
        return "list"
    return ""


def _kernel(f, policy: str, device: str, loc, target) -> list:
    names = arg_names(f)
    kinds = [_kind(a) for a in f.func.arguments]
    fn = f"{f.ident}_autocast_{device}"
    lines = [f"# {f.name}  ({loc}: {policy})", f"def {fn}(ks, {', '.join(names)}):"]
    if policy == "banned":
        return lines + [f"    _banned({f.func.name!r}, {device!r})", ""]
    tensors = [n for n, k in zip(names, kinds) if k]
    first = next((n for n, k in zip(names, kinds) if k == "tensor"), None)
    body: list = []
    call_args = list(names)
    callee = f.ident
    if policy in ("lower_precision_fp", "fp32", "promote"):
        dt = {"lower_precision_fp": f"_lower({device!r})", "fp32": "_f32",
              "promote": f"_promote({device!r}, {', '.join(tensors)})"}[policy]
        body.append(f"    dt = {dt}")
        call_args = [(f"_cc({n}, dt, {device!r})" if k == "tensor" else
                      f"_cl({n}, dt, {device!r})" if k == "list" else n) for n, k in zip(names, kinds)]
    elif policy == "fp32_set_opt_dtype":
        if "dtype" not in names or first is None:
            raise CodegenError(f"{loc}: fp32_set_opt_dtype needs a tensor and a 'dtype' argument in {f.name}")
        body.append(f"    if dtype is None and _first({first}, {device!r}):")
        body.append("        dtype = _f32")
    elif policy == "fp32_append_dtype":
        t_names = arg_names(target)
        if first is None or "dtype" not in t_names or [n for n in t_names if n != "dtype"] != names:
            raise CodegenError(f"{loc}: {target.name} must take {f.name}'s arguments and a 'dtype'")
        body.append(f"    if not _first({first}, {device!r}):")
        body.append(f"        return _ops.{f.ident}({', '.join(names)})")
        callee = target.ident
        call_args = [("_f32" if n == "dtype" else n) for n in t_names]
    return lines + [
        "    token = _set_state(_state().excluding(_AUTOCAST))",
        "    try:",
        *["    " + b for b in body],
        f"        return _ops.{callee}({', '.join(call_args)})",
        "    finally:",
        "        _reset_state(token)",
        "",
        f"m.impl_kernel({f.name!r}, {fn})",
        ""]


def gen_autocast(fns, policy_path: str) -> dict:
    """{file name: source}, one file per device of the table."""
    by_name = {f.name: f for f in fns}
    out = {}
    for device, rows in load_policy(policy_path).items():
        key = DEVICES[device]
        body: list = []
        skipped = []
        for policy, name, target, loc in rows:
            f = by_name.get(name)
            tf = by_name.get(target) if target else None
            if f is None or (target and tf is None):
                skipped.append(name)
                continue
            with context(loc, f"the {key} kernel of {name}"):
                body += _kernel(f, policy, device, loc, tf)
        head = [HEADER,
                f'"""Kernels for the {key} dispatch key, from onion/aten/autocast_policy.yaml '
                f'(other operators fall through)."""',
                "from onion._generated import operators as _ops",
                "from onion.amp.autocast_mode import (banned as _banned, cached_cast as _cc, cast_list as _cl,",
                "                                     first_eligible as _first, lower_dtype as _lower,",
                "                                     promote_type as _promote, use_cast as _use_cast)",
                "from onion.core.dtype import float32 as _f32",
                "from onion.core.dispatch_key import K as _K, bit as _bit",
                "from onion.core.tls import reset_state as _reset_state, set_state as _set_state, state as _state",
                "from onion.dispatch.library import Library as _Library",
                "",
                f"m = _Library('aten', 'IMPL', '{key}')",
                f"_AUTOCAST = _bit(_K.{key})         # excluded while each kernel's operator runs",
                "_use_cast(_ops.to_dtype)",
                "# listed in the table, not declared by onion yet (they take effect when they arrive):",
                *fit_all([f"SKIPPED = {tuple(skipped)!r}"]),
                ""]
        out[f"register_autocast_{device}.py"] = "\n".join(fit_all(head + body)) + "\n"
    return out
