"""The private token that marks a Certificate as issued by a sealed protocol evaluation."""

from __future__ import annotations

from typing import Final, final

__all__ = ["ISSUER", "IssueToken"]


@final
class IssueToken:
    """Singleton proof of issue; pickles by reference so it survives a round trip unchanged."""

    __slots__ = ()

    def __reduce__(self) -> str:
        return "ISSUER"

    def __repr__(self) -> str:
        return "<certificate issuer>"


ISSUER: Final = IssueToken()
