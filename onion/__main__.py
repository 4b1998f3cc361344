"""``python -m onion explain "a + b" --requires-grad``: show every dispatch step of an expression.

The expression is parsed with ``ast`` and evaluated by a tiny interpreter that
knows only names, numbers, arithmetic/comparison operators and calls of
``onion.*`` functions or tensor methods — nothing a user types is ``eval``'d.
"""
from __future__ import annotations

import argparse
import ast
import io
import operator
import sys

import onion

onion._load()

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.MatMult: operator.matmul, ast.Pow: operator.pow}
_CMPOPS = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
           ast.Gt: operator.gt, ast.GtE: operator.ge}
_UNOPS = {ast.USub: operator.neg, ast.UAdd: operator.pos}


class Interpreter:
    """Evaluates a safe subset of Python expressions over named tensors."""

    def __init__(self, names: dict):
        self.names = names

    def eval(self, text: str):
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError as e:
            raise ValueError(f"not a Python expression: {text!r} ({e.msg})") from None
        return self.visit(tree.body)

    def visit(self, node):
        if isinstance(node, ast.Name):
            if node.id not in self.names:
                raise ValueError(f"unknown name '{node.id}' (inputs are: {', '.join(self.names)})")
            return self.names[node.id]
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex, bool, str)):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](self.visit(node.left), self.visit(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNOPS:
            return _UNOPS[type(node.op)](self.visit(node.operand))
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMPOPS:
            return _CMPOPS[type(node.ops[0])](self.visit(node.left), self.visit(node.comparators[0]))
        if isinstance(node, (ast.Tuple, ast.List)):
            return tuple(self.visit(e) for e in node.elts)
        if isinstance(node, ast.Subscript):
            return self.visit(node.value)[self.visit_index(node.slice)]
        if isinstance(node, ast.Call):
            fn = self.callee(node.func)
            args = [self.visit(a) for a in node.args]
            kwargs = {k.arg: self.visit(k.value) for k in node.keywords}
            return fn(*args, **kwargs)
        raise ValueError(f"unsupported syntax in expression: {ast.dump(node)[:60]}")

    def visit_index(self, node):
        if isinstance(node, ast.Slice):
            return slice(*(None if p is None else self.visit(p) for p in (node.lower, node.upper, node.step)))
        if isinstance(node, ast.Tuple):
            return tuple(self.visit_index(e) for e in node.elts)
        if isinstance(node, ast.Constant) and node.value is Ellipsis:
            return Ellipsis
        return self.visit(node)

    def callee(self, node):
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id in ("onion", "torch"):
                fn = getattr(onion, node.attr, None)
                if fn is None or not callable(fn) or node.attr.startswith("_"):
                    raise ValueError(f"onion.{node.attr} is not a public onion function")
                return fn
            obj = self.visit(node.value)
            if not isinstance(obj, onion.Tensor) or node.attr.startswith("_"):
                raise ValueError(f"only tensor methods can be called, not .{node.attr} on {type(obj).__name__}")
            return getattr(obj, node.attr)
        raise ValueError("only onion.<function>(...) and <tensor>.<method>(...) calls are allowed")


def explain(expr: str, requires_grad: bool, shape, dtype, level: int, device: str, out=sys.stdout) -> None:
    dt = getattr(onion, dtype)
    probe = ast.parse(expr, mode="eval")
    names = sorted({n.id for n in ast.walk(probe) if isinstance(n, ast.Name) and n.id not in ("onion", "torch")})
    inputs = {}
    for i, name in enumerate(names):
        t = onion.arange(1 + i, 1 + i + _numel(shape), dtype=dt, device=device).reshape(shape)
        if requires_grad and i == 0:
            t.requires_grad_()
        inputs[name] = t
    out.write(f"expression: {expr}\n")
    for name, t in inputs.items():
        out.write(f"  {name} = {t!r}\n")
        out.write(f"      keyset: {onion._C._dispatch_key_set(t)}\n")
    out.write(f"tls include: {onion._C._dispatch_tls_local_include_set()}\n")
    out.write(f"tls exclude: {onion._C._dispatch_tls_local_exclude_set()}\n")
    out.write("dispatch trace:\n")
    buf = io.StringIO()
    onion._C._set_dispatch_trace(level, buf)
    try:
        result = Interpreter(inputs).eval(expr)
    finally:
        onion._C._set_dispatch_trace(0)
    for line in buf.getvalue().splitlines():
        out.write(f"  {line}\n")
    out.write(f"result: {result!r}\n")


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m onion", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("explain", help="print the keysets, each dispatch step and the result of an expression")
    e.add_argument("expr", help='a Python expression over tensor names, e.g. "a + b" or "(a * b).sum()"')
    e.add_argument("--requires-grad", action="store_true", help="make the first input require grad")
    e.add_argument("--shape", default="2,3", help="shape of each input (default 2,3)")
    e.add_argument("--dtype", default="float32")
    e.add_argument("--device", default="cpu")
    e.add_argument("--level", type=int, default=2, help="trace level: 1 as PyTorch, 2 with reasons (default)")
    o = sub.add_parser("ops", help="onion's operators against PyTorch's, with CPU, Meta and autograd columns")
    o.add_argument("--missing", action="store_true", help="list PyTorch's overloads that onion lacks")
    r = sub.add_parser("profile", help="run a script under onion.profiler: table, chrome trace, PNG of the top ops")
    r.add_argument("script")
    r.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    r.add_argument("--out", default=None, help="folder for the outputs (default: the script's folder)")
    r.add_argument("--sort-by", default="self_cpu_time_total")
    r.add_argument("--row-limit", type=int, default=30)
    r.add_argument("--record-shapes", action="store_true")
    r.add_argument("--profile-memory", action="store_true")
    args = p.parse_args(argv)
    if args.cmd == "profile":
        from .profiler.cli import run
        try:
            run(args.script, args.script_args, args.out, args.sort_by, args.row_limit, args.record_shapes,
                args.profile_memory)
        except FileNotFoundError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        return 0
    if args.cmd == "ops":
        from .ops_listing import render
        sys.stdout.write(render(args.missing))
        return 0
    shape = tuple(int(s) for s in args.shape.split(",") if s.strip())
    try:
        explain(args.expr, args.requires_grad, shape, args.dtype, args.level, args.device)
    except (ValueError, TypeError, RuntimeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
