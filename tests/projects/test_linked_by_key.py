"""Linkage follows the key, not the spelling (``integrity.md`` part 3): a later delivery whose
person column has another name is judged with the project's earlier deliveries whose pseudonyms
came from the same key; a pseudonym length other than the project's is refused in one sentence."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from anonlib.cli import main
from tests.health_data import history_sharing
from tests.projects.test_concurrent_deliveries import delivery

K = 5


def _release(path: Path, person: str, out: Path, *extra: str) -> list[str]:
    return [
        "anonymize", str(path), "--person", person, "--pseudonymize", person, "--shield", "a,b", "--k", str(K),
        "--max-suppressed", "0.1", "--out", str(out), "--project", "p", "--json", *extra,
    ]  # fmt: skip


@pytest.fixture
def first(tmp_path, monkeypatch, capsys) -> Path:
    """The first delivery released into project p, its person column called mrn: groups of 8."""
    monkeypatch.setenv("ANONLIB_HOME", str(tmp_path / "home"))
    delivery(None).rename(columns={"pid": "mrn"}).to_csv(tmp_path / "d0.csv", index=False)
    assert main(_release(tmp_path / "d0.csv", "mrn", tmp_path / "o0.csv")) == 0
    capsys.readouterr()
    return tmp_path


def test_a_delivery_whose_person_column_has_another_name_links_by_the_key(first, capsys):
    """Alone, the second delivery meets k = 5 as it is (groups of 8); with the first, its b would
    halve them (groups of 4), so the search under the cumulative target must coarsen it."""
    delivery(0).rename(columns={"pid": "patient"}).to_csv(first / "d1.csv", index=False)
    assert main(_release(first / "d1.csv", "patient", first / "o1.csv")) == 0
    stated = json.loads(capsys.readouterr().out)
    assert stated["earlier_deliveries"] == 1 and stated["met"]
    union = pd.concat(
        [
            pd.read_csv(first / "o0.csv", dtype=str).rename(columns={"mrn": "person"}).assign(delivery="0"),
            pd.read_csv(first / "o1.csv", dtype=str).rename(columns={"patient": "person"}).assign(delivery="1"),
        ]
    )
    assert union.groupby("delivery")["person"].nunique().min() >= 30  # the same pseudonyms, released twice
    assert history_sharing(union, ["delivery", "a", "b"], "person").min() >= K  # pandas, on the union


def test_another_pseudonym_length_than_the_projects_is_refused_in_one_sentence(first, capsys):
    delivery(0).rename(columns={"pid": "mrn"}).to_csv(first / "d1.csv", index=False)
    assert main(_release(first / "d1.csv", "mrn", first / "o1.csv", "--pseudonym-length", "12")) == 2
    assert capsys.readouterr().err == (
        "error: The project 'p' releases pseudonyms of 16 hexadecimal characters (audit entry 1), and this release "
        "would make them 12 long, so they would not link: a project fixes one length; give --pseudonym-length 16.\n"
    )
    assert not (first / "o1.csv").exists()
    assert main(_release(first / "d1.csv", "mrn", first / "o1.csv", "--pseudonym-length", "16")) == 0
