"""``python -m anonlib``: the profile command on samples and files, and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anonlib.__main__ import main

ROOT = Path(__file__).resolve().parents[2]


def test_profile_of_a_sample_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profile", "--sample", "caballero_table1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["quasi_identifiers"] == ["ZIP", "Gender", "Age"]
    assert (result["k"], result["anonymity_vector"]) == (2, [0, 1, 0, 2, 1])


def test_profile_of_a_file_with_chosen_columns_and_counts(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(ROOT / "data" / "samples" / "arca_table1.csv")
    assert main(["profile", path, "--qi", "Sex", "--count", "#Rec.", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["records"] == 60 and result["classes"] == 2 and result["k"] == 27


def test_profile_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profile", "--sample", "adult", "--qi", "age,sex,race"]) == 0
    out = capsys.readouterr().out
    assert "unique records     65 (0.20%)" in out
    assert "classes            546" in out


@pytest.mark.parametrize(
    "argv, phrase",
    [
        (["profile", str(ROOT / "tests" / "hostile" / "empty.csv")], "The file is empty."),
        (["profile", "--sample", "adult", "--qi", "agee"], "do not exist in the data: agee"),
        (["profile"], "Give a file to read"),
    ],
)
def test_errors_are_one_sentence_and_exit_2(argv, phrase, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and phrase in err and "Traceback" not in err


def test_samples_lists_every_sample(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["samples"]) == 0
    assert "arca_table1" in capsys.readouterr().out
