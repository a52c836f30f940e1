"""The erase verification's one-pass byte search finds exactly the needles a plain `in` finds: any
length, overlapping, at chunk boundaries, in any bytes (a needle it missed would let an erase
report verified with the text still on disk)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ripplemem.privacy.byte_search import Needles

# A small alphabet makes needles recur, overlap and share prefixes.
NEEDLE = st.lists(st.sampled_from([b"a", b"b", b"\x00", b"\xff", b"ab"]), min_size=1, max_size=14)


@settings(max_examples=300, deadline=None)
@given(
    needles=st.lists(NEEDLE, min_size=1, max_size=8),
    filler=st.lists(st.sampled_from([b"a", b"b", b"c", b"\x00", b"\xff"]), max_size=200).map(b"".join),
    plant=st.lists(st.tuples(st.integers(0, 7), st.integers(0, 200)), max_size=6),
    chunk=st.integers(1, 40),
)
def test_scan_finds_what_in_finds(
    needles: list[list[bytes]], filler: bytes, plant: list[tuple[int, int]], chunk: int
) -> None:
    data = filler
    for which, where in plant:
        needle = b"".join(needles[which % len(needles)])
        data = data[:where] + needle + data[where:]
    pieces = [data[i : i + chunk] for i in range(0, len(data), chunk)] or [b""]
    joined = [b"".join(parts) for parts in needles]
    assert Needles(joined).scan(pieces) == {n for n in joined if n in data}


def test_text_with_several_needles_and_none() -> None:
    needles = Needles([b"Vornakian syndrome", b"Zelpratrexol", "杭州".encode()])
    assert needles.scan_text("I take Zelpratrexol; the Vornakian syndrome; 杭州出差") == {
        b"Vornakian syndrome",
        b"Zelpratrexol",
        "杭州".encode(),
    }
    assert needles.scan_text("nothing of it here") == set()
    assert not Needles([])
