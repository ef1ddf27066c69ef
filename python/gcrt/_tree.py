"""Pytree paths of a package's inputs and outputs.

A package records where each user input sits in the call torch.export saw
("x", "pair[0]", "extra['scale']") and where each output sits in the value
the model returned (".logits", "[0]", ".parts[1]['relu']"). These are parsed
once, at load; a call then only follows the parsed steps.
"""

import ast
import re
import sys

# One step: .attr, [int] or ['key'] / ["key"].
_STEP = re.compile(r"""\.([A-Za-z_]\w*)|\[(-?\d+)\]|\[('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\]""")
_NAME = re.compile(r"[A-Za-z_]\w*")

ATTR, INDEX, KEY = "attr", "index", "key"


def parse_steps(text, start=0):
    """The steps of `text` from `start` on, as (kind, value) pairs."""
    steps = []
    pos = start
    while pos < len(text):
        m = _STEP.match(text, pos)
        if not m:
            raise ValueError(f"cannot read the pytree path {text!r} at {text[pos:]!r}")
        if m.group(1) is not None:
            steps.append((ATTR, m.group(1)))
        elif m.group(2) is not None:
            steps.append((INDEX, int(m.group(2))))
        else:
            steps.append((KEY, ast.literal_eval(m.group(3))))
        pos = m.end()
    return steps


def parse_input(text):
    """An input path: the parameter's name and the steps inside it."""
    m = _NAME.match(text)
    if not m:
        raise ValueError(f"cannot read the input path {text!r}")
    return m.group(0), parse_steps(text, m.end())


def follow(value, steps):
    for kind, key in steps:
        value = getattr(value, key) if kind == ATTR else value[key]
    return value


class Record(dict):
    """A returned object whose fields were reached by attribute (a model
    output class): a dict in the traced order whose keys read as attributes
    too. Where torch is loaded it is a pytree node, so tree_leaves and
    tree_map see into it as into the model's own output class."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


_record_registered = False


def _register_record():
    global _record_registered
    if _record_registered or "torch" not in sys.modules:
        return
    from torch.utils import _pytree

    _pytree.register_pytree_node(
        Record,
        lambda r: (list(r.values()), list(r.keys())),
        lambda values, keys: Record(zip(keys, values)),
        serialized_type_name="gcrt.Record",
        flatten_with_keys_fn=lambda r: ([(_pytree.MappingKey(k), v) for k, v in r.items()],
                                        list(r.keys())),
    )
    _record_registered = True


class OutputTree:
    """Builds the returned structure from the outputs' paths: tuples for
    [i], dicts for ['k'], Records for .name; a lone "" is the tensor."""

    def __init__(self, paths):
        self._parsed = [parse_steps(p) for p in paths]
        self._lone = len(paths) == 1 and not self._parsed[0]
        if not self._lone and any(not s for s in self._parsed):
            # No record (a hand-made graph): the outputs in order.
            self._parsed = [[(INDEX, i)] for i in range(len(paths))]

    def build(self, values):
        if self._lone:
            return values[0]
        root = {}
        for steps, value in zip(self._parsed, values):
            node = root
            for depth, step in enumerate(steps):
                last = depth == len(steps) - 1
                node = node.setdefault(step, value if last else {})
        return self._finish(root)

    def _finish(self, node):
        if not isinstance(node, dict):
            return node
        kinds = {kind for kind, _ in node}
        items = [(key, self._finish(child)) for (_, key), child in node.items()]
        if kinds == {INDEX}:
            items.sort()
            return tuple(child for _, child in items)
        if kinds == {ATTR}:
            _register_record()
            return Record(items)
        return dict(items)
