"""The fetch engine shared by the units."""
from .engine import FetchBeat, FetchCommand, FetchEngine, FetchError

__all__ = ["FetchBeat", "FetchCommand", "FetchEngine", "FetchError"]
