"""onion.profiler against torch.profiler: the operators and backward nodes a training step records,
the table's layout, the chrome trace's shape, record_function, schedules, memory, modes, bad input.

Times are never compared (they depend on the machine); names, counts, nesting, shapes and bytes are.
"""
from __future__ import annotations

import collections
import json

import numpy as np
import pytest

import onion
from conftest import torch
from onion.dispatch.dispatcher import dispatcher
from onion.utils._python_dispatch import TorchDispatchMode

# Operators PyTorch's C++ kernels call internally, which onion's NumPy kernels have no need of: the
# comparison leaves them out on both sides.
PYTORCH_INTERNAL = {
    "aten::empty_strided", "aten::empty", "aten::empty_like",      # ATen allocates outputs as operators
    "aten::resolve_conj",                                           # mm resolves lazy conjugation bits
    "aten::result_type", "aten::to", "aten::_to_copy", "aten::copy_",  # scalar wrapping / dtype checks
    "aten::as_strided", "aten::transpose", "aten::fill_",          # t(), sum's and ones_like's internals
    "aten::sum", "aten::div_",                                      # mean's CPU kernel is sum then div_
    "detach",           # VariableTypeManual's detach opens a RecordFunction of its own inside aten::detach
}
# Known differences of onion's own (each named, with why); the comparisons skip them.  None left in this
# step: AccumulateGrad steals a lone gradient (aten::detach) and clamp's backward makes its zero with
# aten::scalar_tensor, as PyTorch's do.
ONION_DIFFERS: dict = {}


def _tree(events, skip=()):
    """The event forest as indented names, kernel rows and the named operators left out."""
    lines = []

    def walk(e, depth):
        if e.name.startswith(("numpy.", "cupy.", "meta.")) or e.name in skip:
            return
        lines.append("  " * depth + e.name)
        for c in e.cpu_children:
            walk(c, depth + 1)
    for e in events:
        if e.cpu_parent is None:
            walk(e, 0)
    return lines


def _mlp_step(T, prof_mod, **kwargs):
    """A raw-operator MLP training step: mm, clamp, mm, squared error, backward, SGD under no_grad."""
    rng = np.random.default_rng(0)
    x = T.tensor(rng.standard_normal((8, 6)).astype(np.float32))
    y = T.tensor(rng.standard_normal((8, 3)).astype(np.float32))
    w1 = T.tensor(rng.standard_normal((6, 5)).astype(np.float32), requires_grad=True)
    w2 = T.tensor(rng.standard_normal((5, 3)).astype(np.float32), requires_grad=True)
    with prof_mod.profile(activities=[prof_mod.ProfilerActivity.CPU], **kwargs) as prof:
        with prof_mod.record_function("forward"):
            h = T.mm(x, w1).clamp(min=0)
            out = T.mm(h, w2)
            loss = ((out - y) ** 2).mean()
        loss.backward()
        with T.no_grad():
            for w in (w1, w2):
                w -= 0.1 * w.grad
                w.grad = None
    return prof


def _is_op(e):
    return e.name.startswith("aten::")


def _first_level(events):
    """Operators not called by another operator (by the program, a record_function block or a backward
    node), and every backward node, as name -> count."""
    c = collections.Counter()
    for e in events:
        if e.name.startswith(("numpy.", "cupy.", "meta.")):
            continue
        parent = e.cpu_parent
        if _is_op(e) and (parent is None or not _is_op(parent)) or not _is_op(e) and e.name != "forward":
            if e.name not in PYTORCH_INTERNAL and e.name not in ONION_DIFFERS:
                c[e.name] += 1
    return c


@pytest.mark.oracle
def test_mlp_step_operators_and_backward_nodes_match_torch():
    ours = _mlp_step(onion, onion.profiler)
    theirs = _mlp_step(torch, torch.profiler)
    assert _first_level(ours.events()) == _first_level(theirs.events())
    names = {e.key for e in ours.key_averages()}
    for expected in ("aten::mm", "aten::clamp", "aten::pow", "aten::mean", "MmBackward0", "ClampBackward1",
                     "autograd::engine::evaluate_function: MeanBackward0", "torch::autograd::AccumulateGrad"):
        assert expected in names
    # every operator PyTorch records is one onion records too, up to the documented lists
    theirs_all = {e.key for e in theirs.key_averages()} - PYTORCH_INTERNAL - set(ONION_DIFFERS)
    ours_all = {e.key for e in ours.key_averages() if not e.key.startswith("numpy.")}
    assert theirs_all <= ours_all
    # the calls of the program itself, counted as PyTorch counts them
    counts = {e.key: e.count for e in ours.key_averages()}
    assert counts["aten::mm"] == 5 and counts["MmBackward0"] == 2 and counts["aten::sub_"] == 2
    # and the whole tree, row for row, once PyTorch's C++-internal operators are left out on both sides
    assert _tree(ours.events(), PYTORCH_INTERNAL) == _tree(theirs.events(), PYTORCH_INTERNAL)


def test_nesting_and_totals_add_up():
    prof = _mlp_step(onion, onion.profiler)
    events = prof.events()
    for e in events:
        assert e.cpu_time_total >= sum(c.cpu_time_total for c in e.cpu_children) >= 0
        assert e.self_cpu_time_total >= 0
        for c in e.cpu_children:
            assert c.cpu_parent is e
            assert e.time_range.start <= c.time_range.start <= c.time_range.end <= e.time_range.end
    forward = [e for e in events if e.name == "forward"]
    assert len(forward) == 1
    assert [c.name for c in forward[0].cpu_children] == ["aten::mm", "aten::clamp", "aten::mm", "aten::sub",
                                                         "aten::pow", "aten::mean"]
    outer = [e for e in events if e.name == "autograd::engine::evaluate_function: PowBackward0"][0]
    assert [c.name for c in outer.cpu_children] == ["PowBackward0"]
    assert [c.name for c in outer.cpu_children[0].cpu_children][:1] == ["aten::pow"]
    # Self CPU time total is the sum of every event's self time: the top-level events' totals
    total = sum(e.self_cpu_time_total for e in events)
    top = sum(e.cpu_time_total for e in events if e.cpu_parent is None)
    assert total == pytest.approx(top, rel=1e-9, abs=1e-6)
    assert events.self_cpu_time_total == pytest.approx(total)


def test_kernel_events_name_the_numpy_function_and_link_their_operator():
    a = onion.ones(4, 3)
    b = onion.ones(3, 2)
    with onion.profiler.profile() as prof:
        onion.mm(a, b)
        a * 2.0
        onion.ones(2, dtype=onion.float64) + onion.ones(2, dtype=onion.float64)
    kernels = [e for e in prof.events() if e.device_type is onion.profiler.DeviceType.KERNEL]
    names = [k.name for k in kernels]
    assert "numpy.mm_impl <float32>" in names
    assert "numpy.multiply <float32>" in names
    assert "numpy.add <float64>" in names
    for k in kernels:
        assert k.op is not None and k in k.op.kernels and _is_op(k.op)
    mm = [e for e in prof.events() if e.name == "aten::mm"][0]
    assert [k.name for k in mm.kernels] == ["numpy.mm_impl <float32>"]


@pytest.mark.oracle
def test_table_layout_matches_torch():
    ours = _mlp_step(onion, onion.profiler, record_shapes=True, profile_memory=True)
    theirs = _mlp_step(torch, torch.profiler, record_shapes=True, profile_memory=True)
    for kwargs in ({}, {"group_by_input_shape": True}):
        a = ours.key_averages(**kwargs).table(sort_by="cpu_time_total", row_limit=5).splitlines()
        b = theirs.key_averages(**kwargs).table(sort_by="cpu_time_total", row_limit=5).splitlines()
        if not kwargs:
            assert a[:3] == b[:3]                       # the rules and the header, column for column
        else:
            assert a[1].split() == b[1].split()
        assert len(a) == len(b) == 3 + 5 + 2
        assert a[-1].startswith("Self CPU time total: ")
        assert len({len(line) for line in a[:-1]}) == 1     # every row as wide as the rules
    shapes = ours.key_averages(group_by_input_shape=True)
    mm = [r for r in shapes if r.key == "aten::mm" and r.input_shapes == [[8, 6], [6, 5]]]
    assert len(mm) == 1 and mm[0].count == 1
    assert "[[8, 6], [6, 5]]" in shapes.table(row_limit=-1)
    rows = ours.key_averages().table(sort_by="self_cpu_time_total", row_limit=3).splitlines()
    assert len(rows) == 3 + 3 + 2


@pytest.mark.oracle
def test_profile_memory_counts_allocations_as_torch():
    def run(T, prof_mod):
        a = T.ones(8, 6)
        b = T.ones(6, 5)
        with prof_mod.profile(activities=[prof_mod.ProfilerActivity.CPU], profile_memory=True) as prof:
            c = T.mm(a, b)
            d = c.t()                   # a view: allocates nothing
            e = T.add(c, 1.0)
        del d, e
        return {r.key: r.cpu_memory_usage for r in prof.key_averages()}
    ours, theirs = run(onion, onion.profiler), run(torch, torch.profiler)
    for key in ("aten::mm", "aten::t", "aten::add"):
        assert ours[key] == theirs[key]
    assert ours["aten::mm"] == 8 * 5 * 4
    table = onion.profiler.profile(profile_memory=True)
    with table:
        onion.mm(onion.ones(8, 6), onion.ones(6, 5))
    assert "CPU Mem" in table.key_averages().table() and "160 B" in table.key_averages().table()


def test_chrome_trace_is_valid_json_with_the_fields(tmp_path):
    prof = _mlp_step(onion, onion.profiler, record_shapes=True)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    schema = {
        "X": {"ph": str, "ts": (int, float), "dur": (int, float), "pid": int, "tid": int, "name": str,
              "cat": str, "args": dict},
        "M": {"ph": str, "ts": (int, float), "pid": int, "tid": int, "name": str, "args": dict},
        "s": {"ph": str, "id": int, "ts": (int, float), "pid": int, "tid": int, "cat": str, "name": str},
        "f": {"ph": str, "id": int, "ts": (int, float), "pid": int, "tid": int, "cat": str, "name": str,
              "bp": str},
    }
    assert isinstance(data["traceEvents"], list)
    flows = collections.defaultdict(dict)
    for ev in data["traceEvents"]:
        fields = schema[ev["ph"]]
        for name, kind in fields.items():
            assert isinstance(ev[name], kind), (name, ev)
        if ev["ph"] == "X":
            assert ev["dur"] >= 0
            assert ev["cat"] in ("cpu_op", "user_annotation", "kernel")
        if ev["ph"] in "sf":
            flows[ev["id"]][ev["ph"]] = ev
    xs = [e for e in data["traceEvents"] if e["ph"] == "X"]
    assert len(xs) == len(prof.events())
    kernels = [e for e in xs if e["cat"] == "kernel"]
    assert kernels and len(flows) == len(kernels)
    for pair in flows.values():
        assert set(pair) == {"s", "f"} and pair["s"]["ts"] <= pair["f"]["ts"]
    mm = [e for e in xs if e["name"] == "aten::mm"][0]
    assert mm["args"]["Input Dims"] == [[8, 6], [6, 5]] and mm["args"]["Input type"] == ["float32", "float32"]
    assert any(e["name"] == "forward" and e["cat"] == "user_annotation" for e in xs)


def test_record_function_blocks_hold_their_children():
    @onion.profiler.record_function("decorated")
    def f(x):
        return x.exp()

    x = onion.ones(3)
    with onion.profiler.record_function("outside"):        # no profiler: nothing recorded, no error
        x.neg()
    with onion.profiler.profile() as prof:
        with onion.profiler.record_function("block"):
            y = x.sin()
            f(y)
    events = prof.events()
    block = [e for e in events if e.name == "block"][0]
    assert [c.name for c in block.cpu_children] == ["aten::sin", "decorated"]
    assert [c.name for c in block.cpu_children[1].cpu_children] == ["aten::exp"]
    assert not any(e.name == "outside" for e in events)
    with pytest.raises(TypeError, match="name must be a str"):
        onion.profiler.record_function(3)


class _PassThrough(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.append(str(func))
        return func(*args, **(kwargs or {}))


def test_pass_through_mode_counts_each_operator_once():
    def run(mode):
        x = onion.ones(4, 3)
        w = onion.ones(3, 2, requires_grad=True)
        with onion.profiler.profile() as prof:
            if mode is None:
                (onion.mm(x, w).clamp(min=0) ** 2).sum().backward()
            else:
                with mode:
                    (onion.mm(x, w).clamp(min=0) ** 2).sum().backward()
        return collections.Counter({r.key: r.count for r in prof.key_averages()})
    mode = _PassThrough()
    plain, moded = run(None), run(mode)
    assert any("mm" in s for s in mode.seen)              # the mode did see the operators
    assert plain == moded
    assert plain["aten::mm"] == 2


def test_recording_off_leaves_the_plain_kernels():
    x = onion.ones(2, 2)
    with onion.profiler.profile():
        (x + x).sum()
    op = dispatcher.ops["aten::add.Tensor"]
    (x + x).sum()
    cached = list(op.dispatch_cache.values()) + list(op.redispatch_cache.values())
    assert cached and not any(getattr(fn, "__name__", "").startswith("profiled") for fn in cached)
    assert dispatcher.profiler is None
    from onion.autograd.graph import AccumulateGrad
    assert not hasattr(AccumulateGrad.apply, "__wrapped__")


@pytest.mark.oracle
@pytest.mark.filterwarnings("ignore:Profiler won't be using warmup", "ignore:Warning. Profiler clears events")
def test_schedule_actions_and_trace_ready_as_torch():
    for kw in ({"wait": 1, "warmup": 1, "active": 2}, {"wait": 0, "warmup": 0, "active": 1, "repeat": 2},
               {"wait": 2, "warmup": 1, "active": 1, "repeat": 1, "skip_first": 3},
               {"wait": 2, "warmup": 0, "active": 2, "skip_first_wait": 1}):
        ours, theirs = onion.profiler.schedule(**kw), torch.profiler.schedule(**kw)
        assert [ours(i).name for i in range(14)] == [theirs(i).name for i in range(14)], kw

    def run(T, prof_mod):
        ready = []
        x = T.ones(3)
        sched = prof_mod.schedule(wait=1, warmup=1, active=2, repeat=2)
        with prof_mod.profile(activities=[prof_mod.ProfilerActivity.CPU], schedule=sched,
                              on_trace_ready=lambda p: ready.append(
                                  sorted(e.name for e in p.events() if e.name.startswith(("ProfilerStep",
                                                                                          "aten::"))))) as p:
            for _ in range(9):
                x.neg()
                p.step()
        return ready
    assert run(onion, onion.profiler) == run(torch, torch.profiler)


@pytest.mark.oracle
def test_bad_input_raises_as_torch(tmp_path):
    def outcome(f):
        try:
            f()
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e)
        return "ok", None
    cases = [
        lambda lib: lib.profiler.schedule(wait=-1, warmup=1, active=1),
        lambda lib: lib.profiler.schedule(wait=0, warmup=0, active=0),
        lambda lib: lib.profiler.schedule(wait=0, warmup=0, active=1, repeat=-1),
        lambda lib: lib.profiler.profile().export_chrome_trace(str(tmp_path / "x.json")),
        lambda lib: lib.profiler.profile().key_averages(),
        lambda lib: lib.profiler.profile().events(),
        lambda lib: lib.profiler.profile().step(),
    ]
    for case in cases:
        assert outcome(lambda: case(onion)) == outcome(lambda: case(torch))
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
        onion.profiler.schedule(wait=-1, warmup=0, active=1)


def test_stacks_and_handlers(tmp_path):
    x = onion.ones(3)
    with onion.profiler.profile(with_stack=True) as prof:
        x.exp()
    path = tmp_path / "stacks.txt"
    prof.export_stacks(str(path))
    lines = path.read_text().splitlines()
    assert lines and all(line.rsplit(" ", 1)[1].isdigit() for line in lines)
    assert any("test_profiler.py" in line and "aten::exp" in line for line in lines)
    with pytest.raises(ValueError, match="metric should be one of"):
        prof.export_stacks(str(path), "cpu_memory")
    handler = onion.profiler.tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w")
    with onion.profiler.profile(on_trace_ready=handler):
        x.exp()
    written = list((tmp_path / "tb").iterdir())
    assert len(written) == 1 and written[0].name.startswith("w.") and written[0].name.endswith(".pt.trace.json")
    json.loads(written[0].read_text())


def test_autograd_profiler_names():
    from onion.autograd import profiler as ap
    x = onion.ones(2, requires_grad=True)
    with ap.profile(record_shapes=True) as prof:
        with ap.record_function("step"):
            (x * x).sum().backward()
    names = [e.name for e in prof.function_events]
    assert "step" in names and "MulBackward0" in names
    assert "autograd::engine::evaluate_function: MulBackward0" in names
    assert prof.key_averages().table().splitlines()[1].split()[:3] == ["Name", "Self", "CPU"]
    assert isinstance(prof.total_average(), ap.FunctionEventAvg)
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        ap.profile().table()


def test_cli_profile_writes_table_and_trace(tmp_path):
    import io

    from onion.__main__ import main
    from onion.profiler.cli import run
    script = tmp_path / "train.py"
    script.write_text("import onion\nx = onion.ones(4, 3)\nw = onion.ones(3, 2, requires_grad=True)\n"
                      "onion.mm(x, w).relu().sum().backward()\n")
    out = io.StringIO()
    written = run(str(script), out_dir=str(tmp_path / "out"), stream=out)
    table = (tmp_path / "out" / "train.table.txt").read_text()
    assert "aten::mm" in table and "MmBackward0" in table and table in out.getvalue()
    json.loads((tmp_path / "out" / "train.trace.json").read_text())
    assert set(written) >= {"table", "trace"}
    assert main(["profile", str(tmp_path / "missing.py")]) == 2


@pytest.mark.oracle
def test_autocast_nesting_as_torch():
    def tree(T):
        a, b = T.ones(4, 4), T.ones(4, 4)
        with T.profiler.profile() as prof:
            with T.autocast("cpu"):
                T.mm(a, b)

        def walk(e):
            if e.name in PYTORCH_INTERNAL - {"aten::to", "aten::_to_copy"} or e.name.startswith("numpy."):
                return None
            return (e.name, tuple(filter(None, (walk(c) for c in e.cpu_children))))
        return [walk(e) for e in prof.events() if e.cpu_parent is None]
    assert tree(onion) == tree(torch)


@pytest.mark.oracle
def test_an_overload_calling_its_own_operator_shows_one_row_as_torch():
    """mean -> mean.dim, mul.Scalar -> mul.Tensor: the inner event of the same name, the outer's only child, is
    folded into the outer (PyTorch's EventList does it when it builds the tree); its kernel moves up with it."""
    def run(T, prof_mod):
        x = T.ones(4, 3)
        with prof_mod.profile(activities=[prof_mod.ProfilerActivity.CPU]) as prof:
            x.mean()
            T.ops.aten.mul.Scalar(x, 2)
            T.ops.aten.div.Scalar(x, 2)
            x.var()
        return prof
    ours, theirs = run(onion, onion.profiler), run(torch, torch.profiler)
    tops = [e.name for e in ours.events() if e.cpu_parent is None]
    assert tops == [e.name for e in theirs.events() if e.cpu_parent is None] == \
        ["aten::mean", "aten::mul", "aten::div", "aten::var"]
    counts = {e.key: e.count for e in ours.key_averages()}
    assert counts["aten::mean"] == 1 and counts["aten::mul"] == 1 and counts["aten::div"] == 1
    mean = ours.events()[0]
    assert [k.name for k in mean.kernels] == ["numpy.mean_impl <float32>"] and mean.kernels[0].op is mean
    var = [e for e in ours.events() if e.name == "aten::var"][0]
    assert [c.name for c in var.cpu_children if c.device_type is onion.profiler.DeviceType.CPU] == []


def test_a_composite_explicit_kernel_that_computes_gets_a_kernel_row():
    """sum's only kernel is CompositeExplicitAutograd and does the NumPy sum itself: one kernel row, linked to
    aten::sum; composites that only call operators (ones_like's fill) or make views (t, detach) get none."""
    x = onion.ones(4, 3)
    with onion.profiler.profile(profile_memory=True) as prof:
        x.sum()
        x.t()
        x.detach()
        onion.scalar_tensor(2.0, dtype=onion.float64)
    events = prof.events()
    by_name = {e.name: e for e in events if e.cpu_parent is None}
    assert [k.name for k in by_name["aten::sum"].kernels] == ["numpy.sum <float32>"]
    assert by_name["aten::sum"].kernels[0].op is by_name["aten::sum"]
    assert by_name["aten::sum"].cpu_memory_usage == 4
    assert by_name["aten::t"].kernels == [] and by_name["aten::detach"].kernels == []
    assert [k.name for k in by_name["aten::scalar_tensor"].kernels] == ["numpy.scalar_tensor <float64>"]
    # the kernel rows are every KERNEL event, each under its operator
    kernels = [e for e in events if e.device_type is onion.profiler.DeviceType.KERNEL]
    assert len(kernels) == 2 and all(k.cpu_parent is k.op for k in kernels)


def _custom_function_step(T):
    class Double(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = T.ones(2, requires_grad=True)
    with T.profiler.profile() as prof:
        Double.apply(x).sum().backward()
        with T.no_grad():
            Double.apply(x)
    return prof


@pytest.mark.oracle
def test_an_autograd_function_is_a_row_named_after_its_class():
    """Function.apply records a range named after the class, holding the operators its forward calls; its
    node's backward shows as ``DoubleBackward`` (with or without grad mode, as PyTorch's)."""
    ours, theirs = _custom_function_step(onion), _custom_function_step(torch)
    assert _tree(ours.events(), PYTORCH_INTERNAL) == _tree(theirs.events(), PYTORCH_INTERNAL)
    assert [e.is_user_annotation for e in ours.events() if e.name == "Double"] == [False, False]
