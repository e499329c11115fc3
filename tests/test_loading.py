"""The loader against a corpus of malformed and hostile files (tests/hostile/).

Malformed files must raise a typed AnonlibError with a sentence saying what is
wrong; readable-but-hostile files (HTML or formulas in names and values, huge
numbers, duplicate or blank names) must load with every character kept as text.
Nothing may raise anything else.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.core.errors import AnonlibError, DataFileError, FileTooLargeError
from anonlib.core.loading import load_table, to_safe_csv

HOSTILE = Path(__file__).parent / "hostile"

MALFORMED = {
    "empty.csv": (DataFileError, "empty"),
    "whitespace_only.csv": (DataFileError, "empty"),
    "only_newlines.csv": (DataFileError, "empty"),
    "header_only.csv": (DataFileError, "column names but no rows"),
    "ragged_rows.csv": (DataFileError, "Line 4 has 5 fields but the table has 3 columns"),
    "binary_junk.png": (DataFileError, "binary file"),
    "utf16_without_bom.csv": (DataFileError, "binary file"),
    "control_characters.csv": (DataFileError, "binary file"),
    "unterminated_quote.csv": (DataFileError, "never closed"),
    "columns_10000.csv": (DataFileError, "10,000 columns; the limit is 2,000"),
    "corrupt.csv.gz": (DataFileError, "gzip-compressed but is damaged"),
    "corrupt.xlsx": (DataFileError, "Excel file could not be opened"),
    "corrupt.parquet": (DataFileError, "Parquet file could not be opened"),
    "extra_field_every_row.csv": (DataFileError, "Line 2 has 3 fields but the table has 2 columns"),
}


def test_corpus_has_at_least_15_files() -> None:
    assert len(list(HOSTILE.iterdir())) >= 15


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_file_gives_clear_error(name: str) -> None:
    error, phrase = MALFORMED[name]
    with pytest.raises(error) as info:
        load_table(HOSTILE / name)
    message = str(info.value)
    assert phrase in message
    assert "Traceback" not in message and "Error" not in message.split()[0]


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_bytes_give_the_same_error_as_paths(name: str) -> None:
    error, _ = MALFORMED[name]
    with pytest.raises(error):
        load_table((HOSTILE / name).read_bytes(), name=name)


def test_gzip_bomb_is_stopped_at_the_size_limit() -> None:
    with pytest.raises(FileTooLargeError, match="unpacks to more than"):
        load_table(HOSTILE / "gzip_bomb.csv.gz", max_bytes=1_000_000)


def test_file_over_the_limit_names_both_sizes() -> None:
    with pytest.raises(FileTooLargeError, match=r"The file is 55 bytes; the limit is 10 bytes"):
        load_table(HOSTILE / "ragged_rows.csv", max_bytes=10)
    with pytest.raises(FileTooLargeError):
        load_table((HOSTILE / "ragged_rows.csv").read_bytes(), max_bytes=10)


def test_wrong_forced_encoding_says_which_and_suggests_another() -> None:
    with pytest.raises(DataFileError, match="not valid utf-8 text .* latin-1"):
        load_table(HOSTILE / "latin1_values.csv", encoding="utf-8")
    with pytest.raises(DataFileError, match="not a known text encoding"):
        load_table(HOSTILE / "latin1_values.csv", encoding="klingon")


def test_missing_file_and_bad_delimiter() -> None:
    with pytest.raises(DataFileError, match="does not exist"):
        load_table(HOSTILE / "no_such_file.csv")
    with pytest.raises(DataFileError, match="single character"):
        load_table(HOSTILE / "one_column.csv", delimiter=";;")


def test_latin1_is_detected_and_decoded() -> None:
    t = load_table(HOSTILE / "latin1_values.csv")
    assert t.encoding == "latin-1"
    assert t.frame["city"].tolist() == ["Doña Ana", "Köln"]
    tsv = load_table(HOSTILE / "latin1.tsv")
    assert (tsv.delimiter, tsv.encoding) == ("\t", "latin-1")
    assert tsv.frame["city"].tolist() == ["Málaga", "Köln"]
    assert tsv.frame["age"].tolist() == [31, 45]


def test_bom_and_semicolon_and_leading_zeros() -> None:
    t = load_table(HOSTILE / "bom_semicolon.csv")
    assert (t.delimiter, t.encoding, t.header) == (";", "utf-8-sig", True)
    assert t.frame.columns.tolist() == ["age", "sex", "zip"]
    assert t.frame["zip"].tolist() == ["01234", "05678"]  # codes keep their zeros


def test_html_in_names_and_values_is_kept_as_plain_text() -> None:
    t = load_table(HOSTILE / "html_in_names.csv")
    assert t.frame.columns.tolist() == ["id", "<script>alert(1)</script>", "<img src=x onerror=alert(2)>"]
    assert t.frame["<script>alert(1)</script>"].tolist() == ["<b>bold</b>", "<i>it</i>"]


def test_formulas_are_flagged_and_neutralised_in_downloads() -> None:
    t = load_table(HOSTILE / "formula_injection.csv")
    assert t.frame["name"].tolist() == ['=HYPERLINK("http://example.invalid","x")', "+1+1", "-2+3"]
    assert any("formulas" in note for note in t.notes)
    lines = to_safe_csv(t.frame).decode().splitlines()
    assert lines[1].startswith("\"'=HYPERLINK")
    assert lines[2] == "'+1+1,'@SUM(A1)"
    assert lines[3] == "'-2+3,plain"


def test_huge_numbers_keep_every_digit() -> None:
    t = load_table(HOSTILE / "huge_numbers.csv")
    assert t.frame["big"].tolist() == ["123456789012345678901234567890", "1"]
    assert t.frame["float"].tolist() == ["1e400", "2.5"]
    assert t.frame["neg"].tolist() == ["-99999999999999999999", "-1"]


def test_one_column_loads_with_a_hint_about_the_delimiter() -> None:
    t = load_table(HOSTILE / "one_column.csv")
    assert t.frame["age"].tolist() == [30, 40, 50]
    assert any("delimiter" in note for note in t.notes)


def test_all_missing_column_is_counted_and_reported() -> None:
    t = load_table(HOSTILE / "all_missing_column.csv")
    assert t.frame["weight"].isna().all()
    assert t.missing_cells == 3
    assert any("entirely missing: weight" in note for note in t.notes)


def test_duplicate_and_blank_names_are_renamed_with_a_note() -> None:
    t = load_table(HOSTILE / "duplicate_names.csv")
    assert t.frame.columns.tolist() == ["age", "sex", "age (2)"]
    assert t.frame["age (2)"].tolist() == [31, 41]
    assert any("appears more than once" in note for note in t.notes)
    blank = load_table(HOSTILE / "blank_header_names.csv")
    assert blank.frame.columns.tolist() == ["age", "column 2", "sex"]


def test_headerless_numeric_file_gets_column_names() -> None:
    t = load_table(HOSTILE / "no_header_numeric.data")
    assert t.header is False
    assert t.frame.columns.tolist() == ["column 1", "column 2", "column 3"]
    assert t.frame["column 3"].tolist() == [145.0, 160.0]


def test_options_override_detection() -> None:
    data = b"a;b\n1;2\n"
    forced = load_table(data, delimiter=",", header=False)
    assert forced.frame.shape == (2, 1)
    assert forced.frame.iloc[0, 0] == "a;b"


def test_real_adult_file_shape_and_missing_cells() -> None:
    t = load_table(Path(__file__).parent.parent / "data" / "samples" / "adult.csv.gz")
    assert t.frame.shape == (32561, 15)
    assert t.missing_cells == 4262  # '?' in workclass, occupation, native-country
    assert t.frame["age"].dtype == "Int64"


def test_excel_and_parquet_round_trip(tmp_path: Path) -> None:
    frame = pd.DataFrame({"age": [30, 40], "zip": ["01234", "05678"], "sex": ["f", None]})
    buffer = pd.io.common.BytesIO()
    frame.to_parquet(buffer)
    parquet = load_table(buffer.getvalue(), name="t.parquet")
    assert parquet.format == "parquet"
    assert parquet.frame["zip"].tolist() == ["01234", "05678"]
    assert parquet.frame["sex"].isna().tolist() == [False, True]
    buffer = pd.io.common.BytesIO()
    frame.to_excel(buffer, index=False)
    excel = load_table(buffer.getvalue(), name="t.xlsx")
    assert excel.format == "excel"
    assert excel.frame["age"].tolist() == [30, 40]


cell = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_crash(data: bytes) -> None:
    try:
        t = load_table(data)
    except AnonlibError:
        return
    assert t.frame.shape[0] >= 1


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(cell, min_size=3, max_size=3), min_size=1, max_size=8))
def test_quoted_csv_round_trips_text(rows: list[list[str]]) -> None:
    frame = pd.DataFrame(rows, columns=["a", "b", "c"])
    data = frame.to_csv(index=False, quoting=csv.QUOTE_ALL).encode("utf-8")
    try:
        t = load_table(data, header=True, delimiter=",")
    except AnonlibError:
        return
    assert t.frame.shape == frame.shape
    expected = frame.map(str.strip)
    for column in frame.columns:
        got = t.frame[column]
        for raw, value in zip(expected[column], got):
            if pd.isna(value):
                assert raw in ("", "?", "NA", "N/A", "NaN", "nan", "NULL", "null")
            elif isinstance(value, str):
                assert value == raw
            else:
                assert np.isclose(float(raw), float(value))


@pytest.mark.parametrize("prefix", ["=", "+", "-", "@", "\t", "\r"])
def test_safe_csv_neutralises_every_owasp_prefix_in_text_categorical_and_names(prefix: str) -> None:
    value = prefix + "SUM(A1)"
    frame = pd.DataFrame({
        "text": [value, "plain"],
        "category": pd.Categorical([value, "plain"]),
        prefix + "name": ["a", "b"],
        "number": [-1, 2],
    })
    header, *rows = csv.reader(io.StringIO(to_safe_csv(frame).decode(), newline=""))
    assert header == ["text", "category", "'" + prefix + "name", "number"]
    assert [r[0] for r in rows] == ["'" + value, "plain"]
    assert [r[1] for r in rows] == ["'" + value, "plain"]
    assert [r[3] for r in rows] == ["-1", "2"]  # numbers are not text: written as they are
