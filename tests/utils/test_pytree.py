"""onion.utils._pytree against torch.utils._pytree on the same structures: leaves and their order, the
TreeSpec's repr and counts, round trips, tree_map over several trees, registered node types, errors."""
import collections
import random

import numpy as np
import pytest

import onion
import onion.utils._pytree as op
from conftest import torch

pytestmark = pytest.mark.oracle
tp = torch.utils._pytree if torch else None

NT = collections.namedtuple("NT", "a b")


def _structures(lib):
    """The same nested structures built for one library (Size and return types are the library's own)."""
    ones = lib.ones(2, 3)
    return [
        1, None, "s", (1, 2), [1, (2, 3)], {"b": 1, "a": 2}, NT(1, (2, [3])), lib.Size([2, 3]),
        collections.OrderedDict(a=1, b=[2, 3]), collections.defaultdict(list, a=1, b=(2,)),
        collections.deque([1, 2], maxlen=5), (), [], {}, [None, (None,)], [[[]]], ({"x": ()}, [None]),
        lib.max(ones, 1), {"k": lib.sort(ones, 0)}, [ones, (ones,)],
    ]


def _leaf_key(x):
    """A leaf as something both libraries' leaves compare equal by."""
    if hasattr(x, "detach") and hasattr(x, "shape"):
        return ("tensor", tuple(x.shape), np.asarray(x.detach().numpy()).tolist())
    return x


def _same_leaves(lo, lt):
    assert [_leaf_key(x) for x in lo] == [_leaf_key(x) for x in lt]


@pytest.mark.parametrize("i", range(len(_structures(onion))))
def test_flatten_matches_torch(i):
    so, st = _structures(onion)[i], _structures(torch)[i]
    lo, spo = op.tree_flatten(so)
    lt, spt = tp.tree_flatten(st)
    _same_leaves(lo, lt)
    assert repr(spo) == repr(spt).replace("torch.", "onion.")
    assert (spo.num_leaves, spo.num_nodes, spo.num_children) == (spt.num_leaves, spt.num_nodes, spt.num_children)
    assert spo.is_leaf() == spt.is_leaf()
    back = op.tree_unflatten(lo, spo)
    assert type(back) is type(so)
    assert op.tree_structure(back) == spo
    _same_leaves(op.tree_leaves(back), lt)
    _same_leaves(op.tree_leaves(so), tp.tree_leaves(st))
    _same_leaves(list(op.tree_iter(so)), list(tp.tree_iter(st)))


def test_round_trip_values():
    tree = {"b": [1, (2, 3)], "a": NT(4, onion.Size([5])), "c": collections.deque([6])}
    leaves, spec = op.tree_flatten(tree)
    assert leaves == [1, 2, 3, 4, 5, 6]
    back = op.tree_unflatten([x * 10 for x in leaves], spec)
    assert back == {"b": [10, (20, 30)], "a": NT(40, onion.Size([50])), "c": collections.deque([60])}
    assert list(back) == ["b", "a", "c"]          # dict order kept
    assert type(back["a"][1]) is onion.Size and type(back["a"]) is NT


def test_return_types_rebuild_as_their_class():
    r = onion.max(onion.tensor([[1.0, 5.0], [7.0, 2.0]]), 1)
    out = op.tree_map(lambda t: t * 2, r)
    assert type(out) is type(r)
    assert out.values.tolist() == [10.0, 14.0] and out.indices.tolist() == [2, 0]


def _random_tree(rng, depth):
    if depth == 0 or rng.random() < 0.3:
        return rng.choice([rng.randint(0, 99), None, "x"])
    kind = rng.choice(["list", "tuple", "dict", "nt"])
    kids = [_random_tree(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    if kind == "list":
        return kids
    if kind == "tuple":
        return tuple(kids)
    if kind == "dict":
        return {f"k{9 - j}": k for j, k in enumerate(kids)}
    return NT(_random_tree(rng, depth - 1), _random_tree(rng, depth - 1))


def test_random_trees_match_torch():
    rng = random.Random(0)
    for _ in range(200):
        tree = _random_tree(rng, 4)
        lo, spo = op.tree_flatten(tree)
        lt, spt = tp.tree_flatten(tree)
        assert lo == lt and repr(spo) == repr(spt)
        assert op.tree_unflatten(lo, spo) == tree
        assert [(op.keystr(k), v) for k, v in op.tree_flatten_with_path(tree)[0]] == \
               [(tp.keystr(k), v) for k, v in tp.tree_flatten_with_path(tree)[0]]


def test_tree_map_several_trees_and_subtree_leaves():
    args = ([1, (2, 3)], [10, ((20, 21), 30)])
    assert op.tree_map(lambda a, b: (a, b), *args) == tp.tree_map(lambda a, b: (a, b), *args)
    assert op.tree_map(lambda a, b: a + b, [1, (2, 3)], [10, (20, 30)]) == [11, (22, 33)]
    d1, d2 = {"a": 1, "b": 2}, {"b": 20, "a": 10}            # keys matched by name, not position
    assert op.tree_map(lambda a, b: a + b, d1, d2) == tp.tree_map(lambda a, b: a + b, d1, d2) == {"a": 11, "b": 22}


@pytest.mark.parametrize("args", [([1, 2], [1]), ([1, 2], (1, 2)), ([1, (2, 3)], [10, 20])], ids=str)
def test_tree_map_mismatch_errors_as_torch(args):
    with pytest.raises(Exception) as et:
        tp.tree_map(lambda a, b: a, *args)
    with pytest.raises(type(et.value)) as eo:
        op.tree_map(lambda a, b: a, *args)
    assert str(eo.value) == str(et.value)


def test_unflatten_wrong_count_errors_as_torch():
    for leaves in ([1, 2], [1, 2, 3, 4]):
        with pytest.raises(ValueError) as et:
            tp.tree_unflatten(leaves, tp.tree_structure([0, (0, 0)]))
        with pytest.raises(ValueError) as eo:
            op.tree_unflatten(leaves, op.tree_structure([0, (0, 0)]))
        assert str(eo.value) == str(et.value)
    with pytest.raises(TypeError, match="TreeSpec"):
        op.tree_unflatten([1], [1])


def test_map_only_and_is_leaf():
    tree = [1, "a", 2.0, (3, True)]
    for types_ in (int, (int, float), float, lambda x: isinstance(x, str)):
        assert op.tree_map_only(types_, lambda x: ("hit", x), tree) == tp.tree_map_only(types_, lambda x: ("hit", x),
                                                                                         tree)
    assert op.tree_map_only(int | float, lambda x: -x, [1, 2.0, "s"]) == [-1, -2.0, "s"]
    leafy = lambda x: isinstance(x, tuple)  # noqa: E731
    lo, spo = op.tree_flatten([1, (2, 3), [4]], is_leaf=leafy)
    lt, spt = tp.tree_flatten([1, (2, 3), [4]], is_leaf=leafy)
    assert lo == lt == [1, (2, 3), 4] and repr(spo) == repr(spt)
    assert op.tree_map(lambda x: x, [1, (2, 3)], is_leaf=leafy) == [1, (2, 3)]
    assert op.tree_any(lambda x: x > 2, [1, [3]]) and not op.tree_all(lambda x: x > 2, [1, [3]])
    assert op.tree_all_only(int, lambda x: x > 0, [1, "a", [2]])
    assert not op.tree_any_only(str, lambda x: x == "b", [1, "a"])
    seen = []
    assert op.tree_map_only_(int, seen.append, (1, ["a", 2])) == (1, ["a", 2]) and seen == [1, 2]


def test_register_pytree_node_custom_type():
    class Pair:
        def __init__(self, x, y):
            self.x, self.y = x, y

    flatten = lambda p: ([p.x, p.y], "ctx")  # noqa: E731
    unflatten = lambda v, c: Pair(*v)  # noqa: E731
    op.register_pytree_node(Pair, flatten, unflatten,
                            flatten_with_keys_fn=lambda p: ([(op.GetAttrKey("x"), p.x), (op.GetAttrKey("y"), p.y)],
                                                            "ctx"))
    tp.register_pytree_node(Pair, flatten, unflatten, serialized_type_name="test_pytree.Pair")
    try:
        tree = [Pair(1, Pair(2, 3))]
        lo, spo = op.tree_flatten(tree)
        lt, spt = tp.tree_flatten(tree)
        assert lo == lt == [1, 2, 3] and repr(spo) == repr(spt)
        back = op.tree_map(lambda v: v * 10, tree)
        assert back[0].x == 10 and back[0].y.x == 20 and back[0].y.y == 30
        assert [op.keystr(k) for k, _ in op.tree_leaves_with_path(tree)] == ["[0].x", "[0].y.x", "[0].y.y"]
        with pytest.raises(ValueError, match="already registered as pytree node"):
            op.register_pytree_node(Pair, flatten, unflatten)
    finally:
        op._deregister_pytree_node(Pair)
        tp._deregister_pytree_node(Pair)
    assert op.tree_leaves([Pair(1, 2)])[0].x == 1        # a leaf again


def test_treespec_equality_and_hash():
    a, b = op.tree_structure([1, (2, 3)]), op.tree_structure([4, (5, 6)])
    assert a == b and hash(a) == hash(b)
    assert a != op.tree_structure([1, [2, 3]]) and a != op.tree_structure({"x": 1})
    assert op.tree_structure({"a": 1, "b": 2}) != op.tree_structure({"a": 1, "c": 2})
    assert op.tree_structure(1) == op.LeafSpec() == op.treespec_leaf() and op.treespec_leaf().is_leaf()
    assert a.child(1).type is tuple and [c.is_leaf() for c in a.children()] == [True, False]
    assert a.flatten_up_to([[7], (8, 9)]) == [[7], 8, 9]
    assert op._broadcast_to_and_flatten(0, a) == [0, 0, 0]
    assert op._broadcast_to_and_flatten([0, 1], a) == [0, 1, 1]
    assert op._broadcast_to_and_flatten([0, 1, 2], a) is None


def test_tensors_are_leaves_and_arg_tree_leaves():
    x = onion.zeros(2)
    assert op.tree_leaves({"t": x, "s": [x.shape]})[0] is x
    assert op.tree_leaves({"t": x, "s": [x.shape]})[1:] == [2]
    assert op.arg_tree_leaves(1, [2, (3,)], k={"z": 4}) == [1, 2, 3, 4]
