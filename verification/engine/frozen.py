"""Building the engine's frozen, slotted dataclasses at the cost of a mutable one's.

A frozen dataclass's __init__ sets each field through `object.__setattr__`, about four times the
cost of a plain attribute store; a bulk job builds a Verdict per row and a DomainAnswer, a DNS
Reply and a DomainHalf per domain. `builder(cls)` gives a positional constructor that fills an
object of a mutable twin class (the same slots, so the same memory layout) and then makes it a
`cls`: the object is a `cls` in every way, equal and hashing alike (tests compare the two).
`replacer(cls)` is `dataclasses.replace` built the same way: a deep batch replaces each row's
Verdict twice and its Checks once (about a third of what `dataclasses.replace` costs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, is_dataclass, make_dataclass
from typing import Any


def draft(cls: type) -> Any:
    """A mutable slotted dataclass with `cls`'s fields, in order: an object made of it becomes a
    `cls` once its class is set to `cls`."""
    assert is_dataclass(cls) and "__slots__" in cls.__dict__, f"{cls.__name__} is no slotted dataclass"
    names = tuple(field.name for field in fields(cls))
    assert tuple(cls.__dict__["__slots__"]) == names, f"{cls.__name__}'s slots are not its fields"
    return make_dataclass(f"{cls.__name__}Draft", names, slots=True)


def builder[T](cls: type[T]) -> Callable[..., T]:
    """`cls(*values)` with every field given in order, without the frozen __init__."""
    made_of = draft(cls)

    def build(*values: object) -> T:
        made = made_of(*values)
        made.__class__ = cls
        return made

    return build


def replacer[T](cls: type[T]) -> Callable[..., T]:
    """`dataclasses.replace(obj, **changes)` for a `cls` (no __post_init__, every field in __init__),
    without the frozen __init__."""
    made_of = draft(cls)
    names = tuple(field.name for field in fields(cls))  # type: ignore[arg-type]

    def replace(obj: T, **changes: object) -> T:
        made = made_of(*[changes[name] if name in changes else getattr(obj, name) for name in names])
        made.__class__ = cls
        return made

    return replace
