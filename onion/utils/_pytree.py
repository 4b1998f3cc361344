"""``onion.utils._pytree``: nested containers flattened to a list of leaves and a ``TreeSpec``.

As ``torch.utils._pytree``: tuples, lists, dicts (``OrderedDict``, ``defaultdict``), ``deque``, namedtuples,
``onion.Size`` and the named tuples of ``onion.return_types`` are nodes; everything else (tensors, numbers,
``None``, strings) is a leaf.  ``register_pytree_node`` adds node types.  Leaves come out depth first, children
left to right, dict values in the dict's own order (its keys are the spec's context).  ``TreeSpec`` prints as
PyTorch's does (``TreeSpec(list, None, [*, TreeSpec(tuple, None, [*, *])])``, a leaf as ``*``).
"""
from __future__ import annotations

import dataclasses
import types
from collections import OrderedDict, defaultdict, deque, namedtuple
from typing import Any, Callable, Iterable, NamedTuple, Optional

__all__ = [
    "PyTree", "Context", "FlattenFunc", "UnflattenFunc", "TreeSpec", "LeafSpec", "treespec_leaf",
    "register_pytree_node", "tree_flatten", "tree_flatten_with_path", "tree_unflatten", "tree_iter",
    "tree_leaves", "tree_leaves_with_path", "tree_structure", "tree_map", "tree_map_", "tree_map_only",
    "tree_map_only_", "tree_map_with_path", "tree_all", "tree_any", "tree_all_only", "tree_any_only",
    "tree_is_leaf", "is_namedtuple", "is_namedtuple_class", "is_namedtuple_instance", "is_structseq",
    "is_structseq_class", "is_structseq_instance", "keystr", "key_get", "SequenceKey", "MappingKey",
    "GetAttrKey", "arg_tree_leaves", "map_only", "register_dataclass",
]

PyTree = Any
Context = Any
FlattenFunc = Callable[[PyTree], "tuple[list, Context]"]
UnflattenFunc = Callable[[Iterable, Context], PyTree]


# ---- keys (paths into a tree) ----

@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp: tuple) -> str:
    """A key path as the Python expression that reaches the leaf (``"['a'][0]"``)."""
    return "".join(str(k) for k in kp)


def key_get(obj, kp: tuple):
    for k in kp:
        obj = k.get(obj)
    return obj


# ---- the node registry ----

class NodeDef(NamedTuple):
    type: Any
    flatten_fn: Callable
    unflatten_fn: Callable
    flatten_with_keys_fn: Optional[Callable]


SUPPORTED_NODES: dict = {}


def _register(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn=None) -> None:
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


def register_pytree_node(cls, flatten_fn: FlattenFunc, unflatten_fn: UnflattenFunc, *,
                         serialized_type_name: Optional[str] = None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None) -> None:
    """Make ``cls`` a node: ``flatten_fn(obj) -> (children, context)``, ``unflatten_fn(children, context)``.

    ``flatten_with_keys_fn(obj) -> ([(key, child), ...], context)`` gives paths (``tree_flatten_with_path``);
    the serialization arguments are accepted for PyTorch's signature (onion does not serialize specs).
    """
    _register(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


_register_pytree_node = register_pytree_node
_private_register_pytree_node = register_pytree_node


def _deregister_pytree_node(cls) -> None:
    SUPPORTED_NODES.pop(cls, None)


def register_dataclass(cls, *, field_names=None, drop_field_names=None, **_ignored) -> None:
    """A dataclass as a node whose children are its fields (``field_names``, default: all init fields)."""
    if field_names is None:
        if not dataclasses.is_dataclass(cls):
            raise ValueError(f"field_names must be given for {cls}, which is not a dataclass")
        drop = set(drop_field_names or ())
        field_names = [f.name for f in dataclasses.fields(cls) if f.init and f.name not in drop]
    names = list(field_names)

    def flatten(obj):
        return [getattr(obj, n) for n in names], names

    def unflatten(values, context):
        return cls(**dict(zip(context, values)))

    def flatten_with_keys(obj):
        return [(GetAttrKey(n), getattr(obj, n)) for n in names], names

    _register(cls, flatten, unflatten, flatten_with_keys)


def is_namedtuple_class(cls) -> bool:
    return (isinstance(cls, type) and issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)
            and all(type(f) is str for f in cls._fields) and callable(getattr(cls, "_make", None))
            and callable(getattr(cls, "_asdict", None)))


def is_namedtuple_instance(obj) -> bool:
    return is_namedtuple_class(type(obj))


def is_namedtuple(obj) -> bool:
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_class(cls) -> bool:
    """A ``return_types`` class (PyTorch: a CPython structseq): a tuple with ``n_fields``-style counts."""
    return (isinstance(cls, type) and issubclass(cls, tuple) and not is_namedtuple_class(cls)
            and all(isinstance(getattr(cls, a, None), int)
                    for a in ("n_fields", "n_sequence_fields", "n_unnamed_fields")))


def is_structseq_instance(obj) -> bool:
    return is_structseq_class(type(obj))


def is_structseq(obj) -> bool:
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def _get_node_type(tree) -> Any:
    """``namedtuple`` for every namedtuple class (as PyTorch: its context is the class), else the type."""
    t = type(tree)
    if t is list or t is tuple or t is dict:
        return t
    if is_namedtuple_class(t):
        return namedtuple
    if t in SUPPORTED_NODES:
        return t
    if is_structseq_class(t):  # return types are made lazily: register each on first sight
        _register(t, _structseq_flatten, _structseq_unflatten_for(t), _structseq_flatten_with_keys)
    return t


def _is_leaf(tree, is_leaf=None) -> bool:
    return (is_leaf is not None and is_leaf(tree)) or _get_node_type(tree) not in SUPPORTED_NODES


def tree_is_leaf(tree, is_leaf=None) -> bool:
    return _is_leaf(tree, is_leaf)


# ---- built-in nodes ----

def _seq_keys(values):
    return [(SequenceKey(i), v) for i, v in enumerate(values)]


def _tuple_flatten(t):
    return list(t), None


def _list_flatten(t):
    return list(t), None


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _dict_unflatten(values, context):
    return dict(zip(context, values))


def _ordereddict_unflatten(values, context):
    return OrderedDict((k, v) for k, v in zip(context, values))


def _defaultdict_flatten(d):
    return list(d.values()), [d.default_factory, list(d.keys())]


def _defaultdict_unflatten(values, context):
    factory, keys = context
    return defaultdict(factory, zip(keys, values))


def _defaultdict_flatten_with_keys(d):
    values, context = _defaultdict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context[1], values)], context


def _deque_flatten(d):
    return list(d), d.maxlen


def _deque_unflatten(values, context):
    return deque(values, maxlen=context)


def _namedtuple_flatten(t):
    return list(t), type(t)


def _namedtuple_unflatten(values, context):
    return context(*values)


def _namedtuple_flatten_with_keys(t):
    return [(GetAttrKey(f), v) for f, v in zip(t._fields, t)], type(t)


def _structseq_flatten(t):
    return list(t), None


def _structseq_unflatten_for(cls):
    def unflatten(values, context):
        return cls(values)
    return unflatten


def _structseq_flatten_with_keys(t):
    return _seq_keys(t), None


def _size_unflatten(values, context):
    from ..core.tensor import Size
    return Size(values)


_register(tuple, _tuple_flatten, lambda values, context: tuple(values), lambda t: (_seq_keys(t), None))
_register(list, _list_flatten, lambda values, context: list(values), lambda t: (_seq_keys(t), None))
_register(dict, _dict_flatten, _dict_unflatten,
          lambda d: ([(MappingKey(k), v) for k, v in d.items()], list(d.keys())))
_register(OrderedDict, _dict_flatten, _ordereddict_unflatten,
          lambda d: ([(MappingKey(k), v) for k, v in d.items()], list(d.keys())))
_register(defaultdict, _defaultdict_flatten, _defaultdict_unflatten, _defaultdict_flatten_with_keys)
_register(deque, _deque_flatten, _deque_unflatten, lambda d: (_seq_keys(d), d.maxlen))
_register(namedtuple, _namedtuple_flatten, _namedtuple_unflatten, _namedtuple_flatten_with_keys)


def _register_size() -> None:
    from ..core.tensor import Size
    if Size not in SUPPORTED_NODES:
        _register(Size, _tuple_flatten, _size_unflatten, lambda t: (_seq_keys(t), None))


_register_size()


# ---- TreeSpec ----

class TreeSpec:
    """The shape of a tree: node ``type`` (``None`` for a leaf), ``context``, and the children's specs."""

    __slots__ = ("type", "context", "children_specs", "num_nodes", "num_leaves", "num_children")

    def __init__(self, type=None, context=None, children_specs=None):
        self.type = type
        self.context = context
        self.children_specs = list(children_specs or ())
        self.num_children = len(self.children_specs)
        if type is None:
            self.num_nodes = self.num_leaves = 1
        else:
            self.num_nodes = 1 + sum(c.num_nodes for c in self.children_specs)
            self.num_leaves = sum(c.num_leaves for c in self.children_specs)

    def is_leaf(self) -> bool:
        return self.type is None

    def children(self) -> list:
        return list(self.children_specs)

    def child(self, index: int) -> "TreeSpec":
        return self.children_specs[index]

    def __eq__(self, other) -> bool:
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (self.type is other.type and self.context == other.context
                and self.children_specs == other.children_specs)

    def __hash__(self) -> int:
        ctx = self.context
        try:
            h = hash(ctx)
        except TypeError:
            h = hash(repr(ctx))
        return hash((self.type, h, tuple(hash(c) for c in self.children_specs)))

    def __repr__(self, indent: int = 0) -> str:
        if self.type is None:
            return "*"
        inner = indent + 2
        kids = [c.__repr__(inner) for c in self.children_specs]
        body = (",\n" + " " * inner).join(kids)
        return f"TreeSpec({self.type.__name__}, {self.context}, [{body}])"

    __str__ = __repr__

    def unflatten(self, leaves: Iterable) -> PyTree:
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers "
                             f"to a pytree that holds {self.num_leaves} items ({self}).")
        if self.type is None:
            return leaves[0]
        return self._build(iter(leaves))

    def _build(self, it):
        if self.type is None:
            return next(it)
        children = [c._build(it) for c in self.children_specs]
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self.context)

    def flatten_up_to(self, tree: PyTree) -> list:
        """The subtrees of ``tree`` at this spec's leaves (``tree`` must have this spec's nodes above them)."""
        out: list = []
        self._flatten_up_to(tree, out)
        return out

    def _flatten_up_to(self, tree, out: list) -> None:
        if self.type is None:
            out.append(tree)
            return
        node_type = _get_node_type(tree)
        if node_type is not self.type:
            raise ValueError(f"Node type mismatch; expected {self.type!r}, but got {type(tree)!r}.")
        children, context = SUPPORTED_NODES[node_type].flatten_fn(tree)
        if len(children) != self.num_children:
            raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(children)}.")
        if node_type in (dict, OrderedDict, defaultdict):
            keys = context[1] if node_type is defaultdict else context
            mine = self.context[1] if node_type is defaultdict else self.context
            if set(keys) != set(mine):
                raise ValueError(f"Node keys mismatch; missing key(s): {set(mine) - set(keys)}; "
                                 f"extra key(s): {set(keys) - set(mine)}.")
            pos = {k: i for i, k in enumerate(keys)}
            children = [children[pos[k]] for k in mine]
        elif context != self.context:
            raise ValueError(f"Node context mismatch for node type {self.type!r}; expected {self.context!r}, "
                             f"but got {context!r}.")
        for spec, child in zip(self.children_specs, children):
            spec._flatten_up_to(child, out)


class LeafSpec(TreeSpec):
    """The spec of a single leaf (kept for PyTorch's older name; ``TreeSpec().is_leaf()`` is the same)."""

    __slots__ = ()

    def __init__(self):
        super().__init__(None, None, [])


_LEAF_SPEC = LeafSpec()


def treespec_leaf() -> TreeSpec:
    return _LEAF_SPEC


# ---- flatten / unflatten ----

def _flatten(tree, leaves: list, is_leaf) -> TreeSpec:
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return _LEAF_SPEC
    node_type = _get_node_type(tree)
    node = SUPPORTED_NODES.get(node_type)
    if node is None:
        leaves.append(tree)
        return _LEAF_SPEC
    children, context = node.flatten_fn(tree)
    return TreeSpec(node_type, context, [_flatten(c, leaves, is_leaf) for c in children])


def tree_flatten(tree: PyTree, is_leaf: Optional[Callable] = None) -> tuple:
    """``(leaves, treespec)``; ``is_leaf(x)`` true stops the descent at ``x``."""
    leaves: list = []
    spec = _flatten(tree, leaves, is_leaf)
    return leaves, spec


def tree_unflatten(leaves: Iterable, treespec: TreeSpec) -> PyTree:
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance of TreeSpec but "
                        f"got item of type {type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_iter(tree: PyTree, is_leaf: Optional[Callable] = None):
    if _is_leaf(tree, is_leaf):
        yield tree
        return
    children, _ = SUPPORTED_NODES[_get_node_type(tree)].flatten_fn(tree)
    for c in children:
        yield from tree_iter(c, is_leaf)


def tree_leaves(tree: PyTree, is_leaf: Optional[Callable] = None) -> list:
    leaves: list = []
    _flatten(tree, leaves, is_leaf)
    return leaves


def tree_structure(tree: PyTree, is_leaf: Optional[Callable] = None) -> TreeSpec:
    return _flatten(tree, [], is_leaf)


def arg_tree_leaves(*args, **kwargs) -> list:
    """The leaves of ``args`` then of ``kwargs``'s values (how operators' arguments are scanned)."""
    leaves: list = []
    for a in args:
        _flatten(a, leaves, None)
    for a in kwargs.values():
        _flatten(a, leaves, None)
    return leaves


def _key_children(tree, node_type):
    node = SUPPORTED_NODES[node_type]
    if node.flatten_with_keys_fn is not None:
        return node.flatten_with_keys_fn(tree)
    raise ValueError(f"Did not find a flatten_with_keys_fn for type: {node_type}. Please pass a "
                     f"flatten_with_keys_fn argument to register_pytree_node.")


def _flatten_with_path(tree, path: tuple, out: list, is_leaf) -> TreeSpec:
    if _is_leaf(tree, is_leaf):
        out.append((path, tree))
        return _LEAF_SPEC
    node_type = _get_node_type(tree)
    keyed, context = _key_children(tree, node_type)
    return TreeSpec(node_type, context, [_flatten_with_path(c, path + (k,), out, is_leaf) for k, c in keyed])


def tree_flatten_with_path(tree: PyTree, is_leaf: Optional[Callable] = None) -> tuple:
    """``([(key_path, leaf), ...], treespec)``; ``keystr(key_path)`` reads a path as Python."""
    out: list = []
    spec = _flatten_with_path(tree, (), out, is_leaf)
    return out, spec


def tree_leaves_with_path(tree: PyTree, is_leaf: Optional[Callable] = None) -> list:
    return tree_flatten_with_path(tree, is_leaf)[0]


# ---- map ----

def tree_map(func: Callable, tree: PyTree, *rests: PyTree, is_leaf: Optional[Callable] = None) -> PyTree:
    """A tree like ``tree`` whose leaves are ``func(leaf, *matching subtrees of rests)``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    if not rests:
        return spec.unflatten([func(x) for x in leaves])
    others = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten([func(*xs) for xs in zip(leaves, *others)])


def tree_map_(func: Callable, tree: PyTree, *rests: PyTree, is_leaf: Optional[Callable] = None) -> PyTree:
    """Call ``func`` on every leaf (for its side effects) and return ``tree`` itself."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    for xs in zip(leaves, *others):
        func(*xs)
    return tree


def tree_map_with_path(func: Callable, tree: PyTree, *rests: PyTree, is_leaf: Optional[Callable] = None) -> PyTree:
    keyed, spec = tree_flatten_with_path(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten([func(kp, x, *xs) for (kp, x), *xs in zip(keyed, *others)])


def _type_pred(type_or_types_or_pred) -> Callable:
    t = type_or_types_or_pred
    if isinstance(t, (type, tuple, types.UnionType)):
        return lambda x: isinstance(x, t)
    if callable(t):
        return t
    raise TypeError("Argument must be a type, a tuple of types, or a callable.")


def map_only(type_or_types_or_pred) -> Callable:
    """Decorator: the function applies to leaves that pass the type test; other leaves pass through."""
    pred = _type_pred(type_or_types_or_pred)

    def wrapper(func):
        def wrapped(x):
            return func(x) if pred(x) else x
        return wrapped
    return wrapper


def tree_map_only(type_or_types_or_pred, /, func: Callable, tree: PyTree,
                  is_leaf: Optional[Callable] = None) -> PyTree:
    """``tree_map`` applying ``func`` only to leaves of the given type(s) (or passing a predicate)."""
    pred = _type_pred(type_or_types_or_pred)
    leaves, spec = tree_flatten(tree, is_leaf)
    return spec.unflatten([func(x) if pred(x) else x for x in leaves])


def tree_map_only_(type_or_types_or_pred, /, func: Callable, tree: PyTree,
                   is_leaf: Optional[Callable] = None) -> PyTree:
    pred = _type_pred(type_or_types_or_pred)
    for x in tree_iter(tree, is_leaf):
        if pred(x):
            func(x)
    return tree


def tree_all(pred: Callable, tree: PyTree, is_leaf: Optional[Callable] = None) -> bool:
    return all(pred(x) for x in tree_iter(tree, is_leaf))


def tree_any(pred: Callable, tree: PyTree, is_leaf: Optional[Callable] = None) -> bool:
    return any(pred(x) for x in tree_iter(tree, is_leaf))


def tree_all_only(type_or_types, pred: Callable, tree: PyTree, is_leaf: Optional[Callable] = None) -> bool:
    test = _type_pred(type_or_types)
    return all(pred(x) for x in tree_iter(tree, is_leaf) if test(x))


def tree_any_only(type_or_types, pred: Callable, tree: PyTree, is_leaf: Optional[Callable] = None) -> bool:
    test = _type_pred(type_or_types)
    return any(pred(x) for x in tree_iter(tree, is_leaf) if test(x))


def _broadcast_to_and_flatten(tree: PyTree, treespec: TreeSpec, is_leaf: Optional[Callable] = None):
    """``tree`` broadcast to ``treespec``'s leaves (a leaf of ``tree`` covers a whole subtree), or None."""
    out: list = []

    def walk(t, spec) -> bool:
        if _is_leaf(t, is_leaf):
            out.extend([t] * spec.num_leaves)
            return True
        if spec.type is None:
            return False
        node_type = _get_node_type(t)
        if node_type is not spec.type:
            return False
        children, context = SUPPORTED_NODES[node_type].flatten_fn(t)
        if len(children) != spec.num_children or context != spec.context:
            return False
        return all(walk(c, s) for c, s in zip(children, spec.children_specs))

    return out if walk(tree, treespec) else None
