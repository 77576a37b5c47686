"""`RuntimeInt`: a stand-in for a runtime integer in tests of static code (layouts, ownerships).

Each operator returns a new `RuntimeInt` whose `text` is the expression and appends that text to
the shared `log`, so a test sees the result and every operation recorded; when built with `fn`,
`at(t)` evaluates the expression for a concrete value of the root variable. Comparing one with
``==`` or asking its truth raises: static code must not decide anything on a runtime value.
"""

import operator


class RuntimeInt:
    def __init__(self, text, log, fn=None):
        self.text, self.log, self.fn = text, log, fn

    def at(self, t):
        return self.fn(t)

    def _binary(self, sym, op, other, reflected=False):
        if isinstance(other, RuntimeInt):
            other_text, other_fn = other.text, other.fn
        elif isinstance(other, int) and not isinstance(other, bool):
            other_text, other_fn = str(other), (lambda t, o=other: o)
        else:
            return NotImplemented
        left, right = (other_fn, self.fn) if reflected else (self.fn, other_fn)
        text = f"({other_text} {sym} {self.text})" if reflected else f"({self.text} {sym} {other_text})"
        fn = None if left is None or right is None else (lambda t: op(left(t), right(t)))
        self.log.append(text)
        return RuntimeInt(text, self.log, fn)

    def __eq__(self, other):
        raise AssertionError(f"compared runtime value {self.text} with ==")

    def __bool__(self):
        raise AssertionError(f"asked for the truth of runtime value {self.text}")

    __hash__ = object.__hash__

    def __repr__(self):
        return self.text


_BINARY = [("add", "+", operator.add), ("sub", "-", operator.sub), ("mul", "*", operator.mul),
           ("floordiv", "//", operator.floordiv), ("mod", "%", operator.mod),
           ("and", "&", operator.and_), ("xor", "^", operator.xor), ("or", "|", operator.or_),
           ("rshift", ">>", operator.rshift), ("lshift", "<<", operator.lshift)]
for _name, _sym, _op in _BINARY:
    setattr(RuntimeInt, f"__{_name}__", lambda self, o, s=_sym, f=_op: self._binary(s, f, o))
    setattr(RuntimeInt, f"__r{_name}__",
            lambda self, o, s=_sym, f=_op: self._binary(s, f, o, reflected=True))
for _name, _sym, _op in [("ge", ">=", operator.ge), ("le", "<=", operator.le),
                         ("gt", ">", operator.gt), ("lt", "<", operator.lt)]:
    setattr(RuntimeInt, f"__{_name}__", lambda self, o, s=_sym, f=_op: self._binary(s, f, o))
