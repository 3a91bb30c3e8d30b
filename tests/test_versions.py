"""GKE version strings, checked against SemVer 2.0.0 precedence (the `semver` package).

gke_ai_batch/domain/versions.py orders exact patches (1.33.0-gke.1712000) with its own key rather than
the library: the library accepts shapes GKE never offers (-rc.1, +build), refuses minor aliases
(1.33), and ranks 1.33.0 above every 1.33.0-gke.N, which an alias must not be confused with.
What the library is good for is this: an independent statement that the key's order is the
standard one on every version GKE can name."""

from __future__ import annotations

import semver
from hypothesis import given
from hypothesis import strategies as st

from gke_ai_batch.domain import versions

patches = st.builds(
    "1.{}.{}-gke.{}".format,
    st.integers(0, 999),
    st.integers(0, 999),
    st.integers(0, 10**12 - 1),
)


@given(patches, patches)
def test_patch_order_is_semver_precedence(a, b):
    assert versions.PATCH_RX.fullmatch(a) and versions.PATCH_RX.fullmatch(b)
    key, sem = versions.patch_key, semver.Version.parse
    assert (key(a) < key(b)) == (sem(a) < sem(b))
    assert (key(a) == key(b)) == (sem(a) == sem(b))


def test_gke_suffix_orders_numerically_not_as_text():
    # "999" > "1712000" as text; GKE's build numbers are numbers, and so are SemVer's.
    assert versions.patch_key("1.33.0-gke.999") < versions.patch_key("1.33.0-gke.1712000")
    assert semver.Version.parse("1.33.0-gke.999") < semver.Version.parse("1.33.0-gke.1712000")
    newest = versions.DEFAULT.extended({"RAPID": ((), None, ("1.36.4-gke.999",))}).newest_known_patch("RAPID", "1.36")
    assert newest == "1.36.4-gke.1082000"


def test_what_the_library_would_accept_and_gke_does_not():
    for text in ("1.33.0-rc.1", "1.33.0+build.5", "1.33.0-gke.1.2"):
        semver.Version.parse(text)  # valid SemVer ...
        assert not versions.PATCH_RX.fullmatch(text)  # ... not a GKE version
    assert semver.Version.parse("1.33.0") > semver.Version.parse("1.33.0-gke.1712000")  # why aliases stay ours
