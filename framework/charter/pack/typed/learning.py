"""The typed models of ``learning.yaml`` (schema ``learning.json``) and of a patch file
(``patches/*.yaml``, schema ``patches.json``), read leniently (``_lenient``) after the schema
has reported what is wrong with them.

A mapping's ``set:`` stays as written: each value is a constant or ``current_<unit> [+|- N]``,
read (and reported at its caret) by ``charter.compile.values``.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, model_validator

from charter.pack.typed._lenient import (
    DocModel,
    Items,
    MapOf,
    OptBool,
    OptInt,
    OptMap,
    OptNum,
    OptStr,
    Strs,
    Sub,
)


class Triggers(DocModel):
    """``triggers:``. ``entropy: null`` turns that trigger off while an absent ``entropy``
    keeps its default, so the stage tells them apart by ``model_fields_set``."""

    skill_failures: OptInt = None
    negation: OptBool = None
    entropy: OptNum = None
    contradiction_turns: OptInt = None
    rejection: OptBool = None

    @model_validator(mode="before")
    @classmethod
    def _rejected_entropy_is_absent(cls, data: Any) -> Any:
        # a value the schema rejected must keep the default, as an absent one does, rather
        # than read as null (the trigger off)
        entropy = data.get("entropy") if isinstance(data, dict) else None
        number = isinstance(entropy, int | float) and not isinstance(entropy, bool)
        if entropy is None or number:
            return data
        return {k: v for k, v in data.items() if k != "entropy"}


class LearningFile(DocModel):
    """A ``learning.yaml``; every key optional."""

    triggers: Sub[Triggers] = Triggers()
    similarity: OptNum = None
    patches_dir: OptStr = None
    concepts: MapOf[OptStr] = Field(default_factory=dict)


class ParameterMapping(DocModel):
    """One item of ``parameter_mappings:``. ``set`` is None when absent or no mapping: such a
    mapping is left out, while an empty one is still checked."""

    id: OptStr = None
    intent: OptStr = None
    entity: OptStr = None
    phrase: OptStr = None
    set_: OptMap = Field(default=None, alias="set")
    learned_from: Strs = ()


class Calibration(DocModel):
    """One item of ``calibrations:``."""

    id: OptStr = None
    confused_pair: Strs = ()
    discriminator: OptStr = None
    example: OptStr = None
    intent: OptStr = None
    learned_from: Strs = ()


StrItems = Annotated[
    tuple[OptStr, ...], BeforeValidator(lambda v: v if isinstance(v, list) else ())
]
"""A list of strings with None for an item that is none, so that item ``i`` is the file's
(``("rejected", i)`` points at it)."""


class PatchFile(DocModel):
    """A ``patches/*.yaml``; item ``i`` of each list is the file's (None where it is no mapping,
    or no string in ``rejected``), so that ``("parameter_mappings", i)`` points at it."""

    parameter_mappings: Items[ParameterMapping] = ()
    calibrations: Items[Calibration] = ()
    rejected: StrItems = ()
