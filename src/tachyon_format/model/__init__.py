"""The format-neutral profile: numpy columns, one stack prefix tree, no file format."""

from .profile import Frames, Profile, Records, Samples, Stacks, Threads

__all__ = ["Frames", "Profile", "Records", "Samples", "Stacks", "Threads"]
