"""Fast constructors for the frozen dataclasses of the history and of the rulesets' states (hot paths)."""
from __future__ import annotations

from typing import Any

_new = object.__new__
_setattr = object.__setattr__  # frozen dataclasses refuse their own __setattr__


def maker(cls: type) -> Any:
    """A constructor for the frozen dataclass `cls` that gives the new instance its `__dict__` in one piece, without
    the generated `__init__`'s one `object.__setattr__` per field (the replay's hot path builds thousands of these).
    Arguments as for `cls(...)`, positional or by name; fields left out take their default (factories are called).
    Falls back to `cls` itself if the class is not a plain one (slots, `__post_init__`)."""
    from dataclasses import MISSING, fields

    if not hasattr(cls, "__dataclass_fields__") or hasattr(cls, "__slots__") or hasattr(cls, "__post_init__"):
        return cls
    params, fills, env = [], [], {"_new": _new, "_sa": _setattr, "_cls": cls, "_MISSING": MISSING}
    for f in fields(cls):
        if f.default is not MISSING:
            env[f"_d_{f.name}"] = f.default
            params.append(f"{f.name}=_d_{f.name}")
        elif f.default_factory is not MISSING:
            env[f"_f_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_MISSING")
            fills.append(f"    if {f.name} is _MISSING:\n        {f.name} = _f_{f.name}()\n")
        else:
            params.append(f.name)
    body = ", ".join(f"{f.name!r}: {f.name}" for f in fields(cls))
    src = (f"def make_{cls.__name__}({', '.join(params)}):\n" + "".join(fills)
           + f"    o = _new(_cls)\n    _sa(o, '__dict__', {{{body}}})\n    return o\n")
    exec(src, env)  # noqa: S102 - generated from the dataclass's own field names, as dataclasses does
    make = env[f"make_{cls.__name__}"]
    make.__doc__ = f"Fast constructor of {cls.__name__} (see engine.fastdata.maker)."
    return make


def evolve(obj: Any, **changes: Any) -> Any:
    """`dataclasses.replace(obj, **changes)` for a plain frozen dataclass (no `__post_init__`, no slots), without
    re-running `__init__`: the new instance gets a copy of the old one's dict with the changes."""
    cls = obj.__class__
    plain = not hasattr(cls, "__post_init__") and not hasattr(cls, "__slots__")
    if not plain or not changes.keys() <= cls.__dataclass_fields__.keys():
        from dataclasses import replace

        return replace(obj, **changes)  # its checks and errors
    d = obj.__dict__.copy()
    d.update(changes)
    new = _new(cls)
    _setattr(new, "__dict__", d)
    return new


__all__ = ["maker", "evolve"]
