"""What a speedscope file says beyond the format-neutral :class:`~tachyon_format.Profile`.

A profile read from one carries a :class:`SpeedscopeFacts` in ``profile.extras["speedscope"]``:
the file's ``name``, ``exporter`` and ``activeProfileIndex``, and per speedscope profile its
name, type, unit and value range, so that a writer can give them back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

EXTRAS_KEY = "speedscope"


@dataclass(frozen=True)
class ProfileFacts:
    """One entry of the file's ``profiles``: it became thread row ``thread`` of the model."""

    name: str
    type: str  # "sampled" or "evented"
    unit: str
    start_value: float
    end_value: float
    thread: int


@dataclass(frozen=True)
class SpeedscopeFacts:
    name: str | None
    exporter: str | None
    active_profile_index: int | None
    profiles: tuple[ProfileFacts, ...]

    @property
    def info(self) -> dict[str, Any]:
        """File-level facts as plain values (what :func:`tachyon_format.info` returns)."""
        return {
            "format": EXTRAS_KEY,
            "name": self.name,
            "exporter": self.exporter,
            "active_profile_index": self.active_profile_index,
            "profiles": [{"name": p.name, "type": p.type, "unit": p.unit,
                          "start_value": p.start_value, "end_value": p.end_value}
                         for p in self.profiles],
        }
