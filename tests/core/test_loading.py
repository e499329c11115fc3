"""The loader against a corpus of malformed and hostile files (tests/hostile/).

Malformed files must raise a typed AnonlibError with a sentence saying what is
wrong; readable-but-hostile files (HTML or formulas in names and values, huge
numbers, duplicate or blank names) must load with every character kept as text.
Nothing may raise anything else.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from anonlib.__main__ import main
from anonlib.core.equivalence import MISSING_LABEL
from anonlib.core.errors import AnonlibError, DataFileError, FileTooLargeError, HierarchyError
from anonlib.core.hierarchy import level_lookup, read_hierarchy_csv
from anonlib.core.loading import columns as loading_columns
from anonlib.core.loading import load_table, to_safe_csv
from anonlib.core.loading import source as loading_source
from anonlib.core.loading import text as loading_text

HOSTILE = Path(__file__).parents[1] / "hostile"

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
    t = load_table(Path(__file__).parents[2] / "data" / "samples" / "adult.csv.gz")
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
    frame = pd.DataFrame(
        {
            "text": [value, "plain"],
            "category": pd.Categorical([value, "plain"]),
            prefix + "name": ["a", "b"],
            "number": [-1, 2],
        }
    )
    header, *rows = csv.reader(io.StringIO(to_safe_csv(frame).decode(), newline=""))
    assert header == ["text", "category", "'" + prefix + "name", "number"]
    assert [r[0] for r in rows] == ["'" + value, "plain"]
    assert [r[1] for r in rows] == ["'" + value, "plain"]
    assert [r[3] for r in rows] == ["-1", "2"]  # numbers are not text: written as they are


# --- the loader's hostile files: each outcome exact, each case within a time and memory bound ---


_POOLS: list[pa.MemoryPool] = []


def _bounded(run, seconds: float, megabytes: float):
    """``run()`` within ``seconds`` and ``megabytes`` of peak memory: Python and numpy
    allocations (tracemalloc) plus Arrow's, counted by a proxy of Arrow's memory pool."""
    previous = pa.default_memory_pool()
    pool = pa.proxy_memory_pool(previous)
    _POOLS.append(pool)  # buffers it allocated are freed through it, later: it must outlive them
    pa.set_memory_pool(pool)
    tracemalloc.start()
    started = time.perf_counter()
    try:
        return run()
    finally:
        elapsed = time.perf_counter() - started
        peak = (tracemalloc.get_traced_memory()[1] + pool.max_memory()) / 1024**2
        tracemalloc.stop()
        pa.set_memory_pool(previous)
        assert elapsed <= seconds, f"{elapsed:.1f} s (bound {seconds} s)"
        assert peak <= megabytes, f"{peak:.0f} MB (bound {megabytes} MB)"


def _refused(
    name: str, error: type[AnonlibError], sentence: str, seconds: float = 10.0, megabytes: float = 60.0
) -> None:
    with pytest.raises(error) as info:
        _bounded(lambda: load_table(HOSTILE / name), seconds, megabytes)
    assert str(info.value) == sentence


EXCEL_REFUSAL = (
    "Excel files are read up to 1,000,000 cells. Save the sheet as CSV, which is read up to 60 million cells."
)


def test_parquet_of_100_million_records_is_refused_from_its_row_groups() -> None:
    """450 KB on disk, 10^8 records in its metadata: refused before one value is read."""
    assert (HOSTILE / "loader_parquet_100_million_records.parquet").stat().st_size < 500_000
    _refused(
        "loader_parquet_100_million_records.parquet",
        FileTooLargeError,
        "The table has 100,000,000 records and 2 columns (200,000,000 cells); the limit is 60,000,000 cells. "
        "Load a sample of the rows or the columns you need.",
        seconds=5.0,
        megabytes=30.0,
    )


def test_xlsx_declaring_a_million_rows_is_refused_from_its_dimension() -> None:
    _refused(
        "loader_xlsx_declares_8_million_cells.xlsx",
        FileTooLargeError,
        f"The workbook holds about 8,000,000 cells; {EXCEL_REFUSAL}",
        seconds=5.0,
    )


def test_xlsx_without_a_dimension_is_counted_before_openpyxl_parses_it() -> None:
    """openpyxl parsed the whole of such a sheet (1.2 M cells: a minute here) just to learn its size."""
    _refused(
        "loader_xlsx_150000_rows_undeclared.xlsx",
        FileTooLargeError,
        f"The workbook holds about 1,200,000 cells; {EXCEL_REFUSAL}",
        seconds=10.0,
    )


def test_xlsx_formulas_without_saved_results_are_noted_and_their_row_kept() -> None:
    t = _bounded(lambda: load_table(HOSTILE / "loader_formulas_without_values.xlsx"), 10.0, 60.0)
    assert t.frame.to_dict("list") == {"zip": [52001, None, 52002], "sex": ["F", None, "M"], "age": [30, None, None]}
    assert t.missing_cells == 4
    assert t.notes == (
        "4 cells hold formulas whose results were never saved (columns age, sex, zip); they are read as missing. "
        "Open the file in a spreadsheet program and save it again to keep the results.",
        "Read as missing values: 4 cells without a value (in zip, sex, age).",
    )


def test_numeric_column_name_is_a_header_and_k_comes_out_right(capsys: pytest.CaptureFixture[str]) -> None:
    t = _bounded(lambda: load_table(HOSTILE / "loader_numeric_column_name.csv"), 5.0, 30.0)
    assert (t.header, t.frame.columns.tolist(), t.frame["2019"].tolist()) == (
        True,
        ["zip", "sex", "2019"],
        [3, 4, 5, 3],
    )
    note = "The first row was read as column names although 2019 looks like a number; if it is data, say that the file has no header."
    assert t.notes == (note,)
    path = str(HOSTILE / "loader_numeric_column_name.csv")
    assert main(["profile", path, "--qi", "zip,sex", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["k"] == 2 and json.loads(out)["records"] == 4
    assert err == f"note: {note}\n"
    assert main(["profile", path, "--qi", "column 1,column 2", "--no-header", "--json"]) == 0
    out, err = capsys.readouterr()
    assert (json.loads(out)["records"], json.loads(out)["k"], err) == (5, 1, "")  # the names are a record: unique
    assert main(["profile", "--sample", "arca_table1", "--header"]) == 2
    assert capsys.readouterr().err == (
        "error: --delimiter, --encoding and --header describe a file; a bundled sample needs none of them.\n"
    )


def test_every_missing_marker_is_read_as_missing_and_counted_by_marker() -> None:
    t = _bounded(lambda: load_table(HOSTILE / "loader_every_missing_marker.csv"), 5.0, 30.0)
    assert t.frame["age"].tolist() == [30, pd.NA, pd.NA, pd.NA, 41] and t.frame["age"].dtype == "Int64"
    assert t.frame["code"].isna().all() and t.frame["note"].tolist() == ["plain", pd.NA, pd.NA, pd.NA, "x"]
    assert t.frame["zip"].tolist() == ["02101", "02102", "02101", "02103", "02101"]
    assert t.missing_cells == 11 == int(t.frame.isna().sum().sum())
    assert t.notes == (
        "Read as missing values: 2 empty cells (in age, note), 2 '?' cells (in code, note), 2 'null' cells "
        "(in code, note), 1 'N/A' cell (in age), 1 'nan' cell (in age), 1 'NA' cell (in code), 1 'NaN' cell "
        "(in code) and 1 'NULL' cell (in code).",
        "These columns are entirely missing: code.",
    )


def test_leading_zeros_signs_and_long_integers_stay_text_18_digits_are_numbers() -> None:
    t = _bounded(lambda: load_table(HOSTILE / "loader_leading_zeros_and_long_integers.csv"), 5.0, 30.0)
    assert t.frame.to_dict("list") == {
        "zip": ["02101", "02102"],
        "long_id": ["1234567890123456789", "9999999999999999999"],  # 19 digits: beyond exact integers, kept as text
        "max_int": [999_999_999_999_999_999, 1],
        "negative": [-999_999_999_999_999_999, -1],
        "small": ["+7", "07"],
    }
    assert [str(t.frame[c].dtype) for c in ("max_int", "negative")] == ["Int64", "Int64"]


def test_quoted_line_breaks_and_doubled_quotes_are_kept() -> None:
    t = _bounded(lambda: load_table(HOSTILE / "loader_quoted_line_breaks.csv"), 5.0, 30.0)
    assert t.frame.to_dict("list") == {
        "name": ["Smith, J", "Doe"],
        "comment": ['said "hi"\nthen left', "multi\nline\nvalue"],
        "age": [30, 40],
    }


def _workclass_release(data: str, rows: str) -> list[str]:
    """``anonymize`` of the loader's workclass file under a marker hierarchy (sex kept by decision)."""
    return ["anonymize", data, "--shield", "workclass", "--keep", "sex", "--k", "2", "--hierarchy", f"workclass={rows}"]


def test_a_hierarchy_row_for_a_marker_applies_to_the_values_read_as_missing(capsys: pytest.CaptureFixture[str]) -> None:
    """'?' is read as missing; the hierarchy's '?' row (? -> Employed -> *) is what it follows.
    Ignoring the row (as before) left it alone at level 1 and forced level 2."""
    data, rows = (
        str(HOSTILE / "loader_workclass_with_marker.csv"),
        str(HOSTILE / "loader_workclass_marker_hierarchy.csv"),
    )
    code = _bounded(
        lambda: main(
            [
                *_workclass_release(data, rows),
                "--json",
            ]
        ),
        10.0,
        60.0,
    )
    out, err = capsys.readouterr()
    result = json.loads(out)
    assert code == 0 and err == "note: Read as missing values: 1 '?' cell (in workclass).\n"
    assert (result["levels"], result["rows"], result["violations"], result["original_violations"]) == (
        {"workclass": 1},
        1,
        0,
        2,
    )


def test_marker_rows_that_disagree_are_reported_in_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    data = str(HOSTILE / "loader_workclass_with_marker.csv")
    rows = str(HOSTILE / "loader_workclass_conflicting_markers.csv")
    sentence = (
        "The hierarchy of workclass has rows for '?' and 'NA', which generalize differently, but the data reads "
        "all of them as missing values and cannot tell them apart; give those rows the same generalizations, "
        "or keep one of them."
    )
    assert (
        main(
            [
                *_workclass_release(data, rows),
            ]
        )
        == 2
    )
    assert capsys.readouterr().err.splitlines()[-1] == f"error: {sentence}"
    with pytest.raises(HierarchyError) as info:
        level_lookup(
            read_hierarchy_csv((HOSTILE / "loader_workclass_conflicting_markers.csv").read_bytes()),
            ["Private", "Self-emp", MISSING_LABEL],
            "workclass",
        )
    assert str(info.value) == sentence


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "c", None]), min_size=1, max_size=30),
    st.sampled_from(["?", "NA", "NULL"]),
    st.integers(2, 4),
)
def test_level_lookup_sends_missing_values_where_the_marker_row_says(values: list, marker: str, levels: int) -> None:
    """Against a slow reference: each value's level-j label is its hierarchy row's column j,
    a missing value's the marker row's; level 0 stays the data's coding."""
    rows = {v: [v] + [f"{v}{j}" if j < levels - 1 else "*" for j in range(1, levels)] for v in "abc"}
    rows[marker] = [marker] + [f"unknown{j}" if j < levels - 1 else "*" for j in range(1, levels)]
    table = pd.DataFrame(list(rows.values()))
    labels = list(dict.fromkeys("missing" if v is None else v for v in values))
    lookup, names = level_lookup(table, labels, "x")
    for level in range(1, levels):
        got = [names[level][lookup[level][labels.index(lab)]] for lab in labels]
        assert got == [rows[marker if lab == MISSING_LABEL else lab][level] for lab in labels]
    assert lookup[0].tolist() == list(range(len(labels)))


# --- the two text readers, typing against a cell-by-cell reference, the CSV cell limit ---

_CELL_TEXTS = [
    "a",
    "Private",
    "x y",
    " ?",
    "?",
    "",
    "NA",
    "nan",
    "12",
    "07",
    "-3",
    "+4",
    "1.5",
    "1e3",
    "1e400",
    "-0",
    "=1+1",
    "@x",
    "é",
    "\u00a0b",
    "b\u00a0",
    " 5 ",
    "\t7",
]
_LINE_ENDS = ["\n", "\r\n", "\r"]


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 4), st.sampled_from([",", ";", "\t"]), st.booleans(), st.data())
def test_bytes_read_as_the_same_file_on_disk(width: int, delimiter: str, quotes: bool, data: st.DataObject) -> None:
    """Bytes in memory holding no quote are split by pyarrow's reader; a file on disk is
    read by pandas' parser, unless a blank line ends in a lone CR before a delimiter
    (pandas drops that delimiter). Both must give the same table and notes, with short
    rows (pandas fills them, pyarrow refuses them), lines of spaces (pandas skips them),
    blank lines, mixed line ends and quoted values."""
    cell = st.sampled_from(_CELL_TEXTS)
    if quotes:
        cell = st.one_of(cell, cell.map(lambda text: '"' + text + '"'), st.just('"a,\r\nb"'))
    rows = data.draw(st.lists(st.lists(cell, min_size=width, max_size=width), min_size=1, max_size=12))
    for row in data.draw(st.lists(st.sampled_from(rows), max_size=1)) if width > 1 else ():
        del row[data.draw(st.integers(1, width - 1)) :]  # a short row
    lines = [delimiter.join(f"c{j}" for j in range(width))] + [delimiter.join(row) for row in rows]
    for _ in range(data.draw(st.integers(0, 2))):  # blank lines and lines of spaces
        lines.insert(data.draw(st.integers(1, len(lines))), data.draw(st.sampled_from(["", "   "])))
    text = "".join(line + data.draw(st.sampled_from(_LINE_ENDS)) for line in lines)
    raw = text.encode("utf-8")
    try:
        from_bytes = load_table(raw, name="t.csv")
    except AnonlibError as err:
        from_bytes = err
    folder = Path(tempfile.mkdtemp())
    (folder / "t.csv").write_bytes(raw)
    try:
        from_path = load_table(folder / "t.csv")
    except AnonlibError as err:
        from_path = err
    if isinstance(from_path, AnonlibError):
        assert (type(from_bytes), str(from_bytes)) == (type(from_path), str(from_path))
        return
    pd.testing.assert_frame_equal(from_bytes.frame, from_path.frame)
    assert (from_bytes.missing_cells, from_bytes.notes, from_bytes.header) == (
        from_path.missing_cells,
        from_path.notes,
        from_path.header,
    )


def test_a_blank_line_ending_in_a_lone_cr_before_a_delimiter_keeps_the_empty_first_value(tmp_path: Path) -> None:
    """pandas' parser reads ``a,b LF CR ,1`` as the record ``1,``; the loader reads ``,1``
    from a path as from bytes (and refuses ``,,`` under two columns, as pyarrow does)."""
    raw = b"a,b\n\r,1\n2,3\r\r,4\r"
    (tmp_path / "cr.csv").write_bytes(raw)
    for source in (raw, tmp_path / "cr.csv"):
        assert load_table(source).frame.to_dict("list") == {"a": [None, 2, None], "b": [1, 3, 4]}


def test_a_line_of_spaces_is_skipped_in_a_table_of_one_column(tmp_path: Path) -> None:
    """pandas skips it; pyarrow, which splits bytes in memory, would read it as a value."""
    raw = b"age\n31\n   \n45\n"
    (tmp_path / "one.csv").write_bytes(raw)
    for source in (raw, tmp_path / "one.csv"):
        assert load_table(source).frame.to_dict("list") == {"age": [31, 45]}


def test_a_file_of_unicode_spaces_is_empty() -> None:
    with pytest.raises(DataFileError, match="The file is empty."):
        load_table("\n\u00a0\n\u00a0 ".encode())


def _reference_typing(cells: list[str | None], markers: tuple[str, ...]) -> tuple[list, int, tuple, bool]:
    """The typing rules cell by cell: strip, a marker or no value is missing, numbers when
    every other value converts without loss (no leading zero, at most 18 digits, finite)."""
    number = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", re.ASCII)
    stripped = [None if c is None else c.strip() for c in cells]
    missing = [s is None or s in markers for s in stripped]
    present = [s for s, m in zip(stripped, missing) if not m]
    kind = "text"
    if present and all(number.fullmatch(s) for s in present):
        if all(re.fullmatch(r"[+-]?\d+", s, re.ASCII) for s in present):
            if not any(re.match(r"[+-]?0\d", s) or len(s.lstrip("+-").lstrip("0")) >= 19 for s in present):
                kind = "integer"
        elif all(math.isfinite(float(s)) for s in present):
            kind = "float"
    convert = {"integer": lambda s: int(s), "float": float, "text": lambda s: s}[kind]
    values = [None if m else convert(s) for s, m in zip(stripped, missing)]
    found: dict[str | None, int] = {}
    for s, m in zip(stripped, missing):
        if m and s is not None:
            found[s] = found.get(s, 0) + 1
    if None in stripped:
        found[None] = stripped.count(None)
    formula = kind == "text" and any(s[:1] in ("=", "+", "-", "@") for s in present)
    return values, sum(missing), tuple(found.items()), formula


_WHOLE = st.one_of(
    st.integers(-(10**6), 10**6), st.sampled_from([10**18 - 1, 10**18, -(10**18 - 1), -(10**18), 2**63 - 1])
)
_COLUMN_CELLS = st.one_of(
    st.lists(_WHOLE.map(str), min_size=1, max_size=20),  # plain whole numbers (19 digits stay text)
    st.builds(
        lambda numbers, odd, at: numbers[:at] + [odd] + numbers[at:],  # one written another way
        st.lists(_WHOLE.map(str), min_size=1, max_size=20),
        st.sampled_from(["07", "00", "-0", "-05", "+5"]),
        st.integers(0, 20),
    ),
    st.lists(
        st.one_of(st.sampled_from(_CELL_TEXTS + ["N/A", "NULL", "00", "1234567890123456789"]), st.none()),
        min_size=1,
        max_size=20,
    ),
    st.lists(st.sampled_from(["Male", "Female", "?", " Male"]), min_size=1, max_size=20),
)


@settings(max_examples=200, deadline=None)
@given(_COLUMN_CELLS, st.integers(1, 3))
def test_typing_equals_a_cell_by_cell_reference(cells: list[str | None], chunks: int) -> None:
    """Each path of the typing (plain whole numbers parsed at once, text kept as read with
    its few markers compared, the distinct values otherwise) against the rules applied to
    every cell in Python."""
    markers = ("", "?", "NA", "N/A", "NaN", "nan", "NULL", "null")
    cut = np.linspace(0, len(cells), chunks + 1).astype(int)
    column = pa.chunked_array(
        [pa.array(cells[a:b], pa.large_string()) for a, b in zip(cut, cut[1:])], pa.large_string()
    )
    typed = loading_columns.typed_values(column, pa.array(markers, pa.large_string()))
    values, missing, found, formula = _reference_typing(cells, markers)
    got = [None if pd.isna(v) else (v.item() if hasattr(v, "item") else v) for v in pd.array(typed.values)]
    assert got == values
    assert (typed.missing, typed.markers, typed.formula_like) == (missing, found, formula)


def test_csv_past_the_cell_limit_is_refused_while_read_and_at_the_limit_is_read() -> None:
    at_limit = b"a,b\n" + b"1,x\n" * 50
    assert load_table(at_limit, max_cells=100).frame.shape == (50, 2)
    with pytest.raises(FileTooLargeError) as info:
        load_table(at_limit + b"2,y\n", max_cells=100)
    assert (
        str(info.value)
        == "The table has more than 100 cells, the limit. Load a sample of the rows or the columns you need."
    )


def test_short_rows_cannot_pass_the_cell_limit_before_it_is_checked() -> None:
    """A header of 200 columns above 300,000 one-byte rows: pandas fills each short row to 200
    cells, so the file would become 60 million cells; its line count refuses it after the
    first part is read."""
    bomb = (",".join(f"c{j}" for j in range(200)) + "\n").encode() + b"x\n" * 300_000
    with pytest.raises(FileTooLargeError) as info:
        _bounded(lambda: load_table(bomb, max_cells=1_000_000), 10.0, 400.0)
    assert (
        str(info.value)
        == "The table has more than 1,000,000 cells, the limit. Load a sample of the rows or the columns you need."
    )


def test_a_quote_after_a_space_starts_a_quoted_value_on_disk_and_in_memory(tmp_path: Path) -> None:
    raw = b'id, name, note\n1, "Smith, J", "a ""b"""\n2, Doe, plain\n'
    (tmp_path / "q.csv").write_bytes(raw)
    for source in (raw, tmp_path / "q.csv"):
        assert load_table(source).frame.to_dict("list") == {
            "id": [1, 2],
            "name": ["Smith, J", "Doe"],
            "note": ['a "b"', "plain"],
        }


def test_a_wide_short_row_file_is_refused_after_one_part_of_the_cell_limit() -> None:
    """The parts read past the line count's warning hold at most the limit's cells, whatever
    the width: 1,000 columns above 300,000 one-byte rows stop after 1,000 records."""
    bomb = (",".join(f"c{j}" for j in range(1000)) + "\n").encode() + b"x\n" * 300_000
    with pytest.raises(FileTooLargeError, match="more than 1,000,000 cells"):
        _bounded(lambda: load_table(bomb, max_cells=1_000_000), 10.0, 100.0)


def test_a_lone_cr_before_a_delimiter_past_the_first_block_of_a_quoted_file(tmp_path: Path) -> None:
    """The whole file is looked at for it, not only up to the first quote."""
    raw = b'"a",b\n' + b'"x",1\n' * 200_000 + b"\r,2\n"
    (tmp_path / "late.csv").write_bytes(raw)
    for source in (raw, tmp_path / "late.csv"):
        frame = load_table(source).frame
        assert (len(frame), pd.isna(frame["a"].iloc[-1]), frame["b"].iloc[-1]) == (200_001, True, 2)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from([b"a", b",", b";", b'"', b"\r", b"\n", b" "]), max_size=40).map(b"".join),
    st.sampled_from([",", ";"]),
    st.booleans(),
)
@example(b"a\r,b", ",", True)  # the halves meet between the CR and the delimiter
def test_the_scan_in_two_halves_finds_what_one_pass_finds(raw: bytes, delimiter: str, count_lines: bool) -> None:
    """A large file is scanned as two halves at once. Cut in the middle of every file here
    (which may part a CR from the delimiter after it), in memory and on disk, it counts
    the line ends and finds the quotes, the CRs and the CR before a delimiter that one pass finds."""
    path = Path(tempfile.mkdtemp()) / "t.csv"
    path.write_bytes(raw)
    for src in (
        loading_source.Source("t.csv", len(raw), raw[:10], data=raw),
        loading_source.Source("t.csv", len(raw), raw[:10], path=path),
    ):
        whole = loading_text._scan(src, count_lines, delimiter)
        assert (whole.quoted, whole.cr_delimiter, whole.cr) == (
            b'"' in raw,
            b"\r" + delimiter.encode() in raw,
            b"\r" in raw,
        )
        assert whole.lines == (raw.count(b"\n") + raw.count(b"\r") + 1 if count_lines else 0)
        split = loading_text._SCAN_SPLIT_BYTES
        loading_text._SCAN_SPLIT_BYTES = 0
        try:
            assert loading_text._scan(src, count_lines, delimiter) == whole
        finally:
            loading_text._SCAN_SPLIT_BYTES = split


def test_a_lone_cr_ending_the_first_half_of_a_large_file_before_a_delimiter(tmp_path: Path) -> None:
    """The halves of a large file's scan meet between the lone CR and the delimiter; the
    record keeps its empty first value."""
    rows = 600_000
    before = b"a,b\n" + b"x,1\n" * rows
    raw = before + b"\r,2\n" + b"y,3\n" * (rows - 1) + b"yy,33\n"
    assert raw[len(raw) // 2 - 1 : len(raw) // 2 + 1] == b"\r," and len(raw) >= loading_text._SCAN_SPLIT_BYTES
    (tmp_path / "middle.csv").write_bytes(raw)
    for source in (raw, tmp_path / "middle.csv"):
        frame = load_table(source).frame
        assert (len(frame), pd.isna(frame["a"].iloc[rows]), frame["b"].iloc[rows]) == (2 * rows + 1, True, 2)


def test_a_quote_never_closed_is_refused_also_where_pyarrow_reads_the_file(tmp_path: Path) -> None:
    """A lone CR before a delimiter sends a quoted file to pyarrow, which would read an
    unclosed quote on to the end; the file is refused as pandas refuses it."""
    raw = b'a,b\n\r,1\n2,"x\n3,4\n'
    (tmp_path / "open.csv").write_bytes(raw)
    for source in (raw, tmp_path / "open.csv"):
        with pytest.raises(DataFileError, match="A quoted value is never closed"):
            load_table(source)


# --- whole numbers read by the parser, kept only when the file's size proves them plain ---

_NUMBER_CELLS = ["12", "0", "-3", "100000", "007", "00", "-0", "+5", " 5", "5 ", "-05", "1.5", "1e3"]
_NUMBER_CELLS += ["1234567890123456789", "999999999999999999", "True", "?", "", "x"]


def _all_text(monkeypatch: pytest.MonkeyPatch, source: Path) -> object:
    """The file loaded with every column parsed as text: the reference for the numeric parse."""
    with monkeypatch.context() as patched:
        patched.setattr(loading_text, "_parse_numbers", lambda *args: None)
        try:
            return load_table(source)
        except AnonlibError as err:
            return err


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 4),
    st.booleans(),
    st.integers(0, 400),
    st.lists(st.tuples(st.integers(0, 400), st.integers(0, 3), st.sampled_from(_NUMBER_CELLS)), max_size=3),
    st.lists(st.tuples(st.sampled_from(["blank", "spaces", "short", "no final LF"]), st.integers(0, 400)), max_size=2),
)
@example(2, True, 300, [(250, 0, "007")], [])  # past the sampled lines: only the size tells
@example(3, True, 300, [(250, 0, "007")], [("short", 260), ("short", 270)])  # two missing delimiters hide the zeros
def test_numbers_read_by_the_parser_equal_every_column_read_as_text(
    width: int, header: bool, rows: int, odd: list[tuple[int, int, str]], extras: list[tuple[str, int]]
) -> None:
    """A file of plain whole numbers with a few cells written another way (leading zeros,
    signs, spaces, decimals, 19 digits, words), blank lines, lines of spaces, short rows and
    no final line end, most past the lines the parse samples: loaded from a path, where
    pandas reads numeric-looking columns as numbers, it gives the same table, notes and
    errors as every column parsed as text and typed."""
    rng = np.random.default_rng(rows * 31 + width)
    table = [[str(v) for v in rng.integers(-50, 10**6, width)] for _ in range(max(rows, 1))]
    for row, column, cell in odd:
        table[row % len(table)][column % width] = cell
    lines = [",".join(f"c{j}" for j in range(width))] if header else []
    lines += [",".join(row) for row in table]
    for extra, where in extras:
        at = 1 + where % len(lines)
        if extra == "blank":
            lines.insert(at, "")
        elif extra == "spaces":
            lines.insert(at, "  ")
        elif extra == "short" and width > 1:
            lines[min(at, len(lines) - 1)] = lines[min(at, len(lines) - 1)].rsplit(",", 1)[0]
    raw = ("\n".join(lines) + ("" if any(e == "no final LF" for e, _ in extras) else "\n")).encode()
    path = Path(tempfile.mkdtemp()) / "numbers.csv"
    path.write_bytes(raw)
    try:
        got = load_table(path)
    except AnonlibError as err:
        got = err
    with pytest.MonkeyPatch.context() as monkeypatch:
        want = _all_text(monkeypatch, path)
    if isinstance(want, AnonlibError):
        assert (type(got), str(got)) == (type(want), str(want))
        return
    pd.testing.assert_frame_equal(got.frame, want.frame)
    assert (got.missing_cells, got.notes, got.header) == (want.missing_cells, want.notes, want.header)


def test_a_file_of_plain_numbers_is_read_as_numbers_by_the_parser(tmp_path: Path) -> None:
    """The numeric parse is taken (its columns come back as int64 arrays, not texts), and a
    leading zero past the sampled lines sends the numeric columns back to be read as text (the
    size tells that some number is not plain, not which)."""
    plain = "age,sex,zip\n" + "".join(f"{20 + i % 50},{'FM'[i % 2]},{52000 + i}\n" for i in range(400))
    path = tmp_path / "plain.csv"
    path.write_text(plain)
    src = loading_source.open_source(path, None, loading_source.DEFAULT_MAX_BYTES)
    names, columns = loading_text._parse_numbers(src, ",", plain[:5000], True, 3)
    assert names == ["age", "sex", "zip"]
    assert [type(c).__name__ for c in columns] == ["ndarray", "ChunkedArray", "ndarray"]
    assert columns[2][:2].tolist() == [52000, 52001]
    path.write_text(plain + "30,F,02134\n")
    src = loading_source.open_source(path, None, loading_source.DEFAULT_MAX_BYTES)
    _, columns = loading_text._parse_numbers(src, ",", plain[:5000], True, 3)
    assert [type(c).__name__ for c in columns] == ["ChunkedArray"] * 3
    frame = load_table(path).frame
    assert (str(frame["age"].dtype), str(frame["zip"].dtype), frame["zip"].iloc[-1]) == ("Int64", "string", "02134")


# --- files read as they are (integrity.md part 2) -------------------------------------------------------


def test_a_file_half_utf8_half_latin1_is_read_with_a_note_naming_the_latin1_lines(tmp_path) -> None:
    """It was read as Latin-1 throughout with no note: 'ZÃ¼rich' and 'Zürich' counted apart."""
    data = "city,age\nZürich,30\nBern,31\n".encode() + "Zürich,30\nGenève,40\n".encode("latin-1")
    t = load_table(data, name="mixed.csv")
    assert t.frame["city"].tolist() == ["Zürich", "Bern", "Zürich", "Genève"]
    assert t.notes[-1] == (
        "The file mixes two text encodings: lines 4 and 5 are not UTF-8 like line 2, so they were read as "
        "Latin-1 (line 4: Zürich,30); check those rows."
    )
    assert t.encoding is None  # a recipe replaying it detects the mix again
    # past the detected start (the file's first 256 KB are UTF-8), read from disk
    (tmp_path / "long.csv").write_bytes(
        b"city,age\n" + "Zürich,30\n".encode() * 30_000 + "Zürich,30\n".encode("latin-1")
    )
    t = load_table(tmp_path / "long.csv")
    assert t.frame["city"].value_counts().to_dict() == {"Zürich": 30_001}
    assert "line 30,002 is not UTF-8 like 30,000 lines (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, ...)" in t.notes[-1]
    latin_first = b"city\n" + "Zürich\n".encode("latin-1") + "Zürich\n".encode()
    t = load_table(latin_first, name="latin_first.csv")
    assert t.frame["city"].tolist() == ["Zürich", "Zürich"]
    assert any(
        note.startswith("The file mixes two text encodings: line 2 is not UTF-8 like line 3") for note in t.notes
    )
    plain_latin1 = load_table("city\nZürich\nGenève\n".encode("latin-1"), name="latin1.csv")  # no mix: as before
    assert plain_latin1.frame["city"].tolist() == ["Zürich", "Genève"] and plain_latin1.encoding == "latin-1"
    assert not any("mixes" in note for note in plain_latin1.notes)


def test_column_names_equal_after_unicode_normalization_are_refused_as_duplicates() -> None:
    """'diagnosé' composed and decomposed were both released, the second with raw values."""
    data = "age,diagnos\u00e9,diagnose\u0301\n30,a,b\n40,c,d\n".encode()
    with pytest.raises(AnonlibError) as refused:
        load_table(data, name="twins.csv")
    assert str(refused.value) == (
        "Columns 2 and 3 are both named 'diagnosé', written in two Unicode forms (with a composed and a decomposed "
        "accent), so they cannot be told apart; rename one of them in the file."
    )
    assert load_table(b"age,age\n1,2\n").frame.columns.tolist() == ["age", "age (2)"]  # copies: as before


def _xlsx_with_shared_strings(strings) -> bytes:
    """A workbook whose one sheet holds two cells of shared texts, its shared-text part ``strings``
    (a ``crafted_zips.Member``)."""
    from crafted_zips import Member, crafted_zip

    ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    parts = {
        "[Content_Types].xml": '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
        'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+'
        'xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override '
        'PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.'
        'spreadsheetml.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.'
        'openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>',
        "_rels/.rels": f'<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
        f'relationships"><Relationship Id="rId1" Type="{rel}/officeDocument" Target="xl/workbook.xml"/>'
        "</Relationships>",
        "xl/workbook.xml": f'<?xml version="1.0"?><workbook {ns} xmlns:r="{rel}"><sheets><sheet name="S" sheetId="1" '
        'r:id="rId1"/></sheets></workbook>',
        "xl/_rels/workbook.xml.rels": f'<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/'
        f'package/2006/relationships"><Relationship Id="rId1" Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/>'
        f'<Relationship Id="rId2" Type="{rel}/sharedStrings" Target="sharedStrings.xml"/></Relationships>',
        "xl/worksheets/sheet1.xml": f'<?xml version="1.0"?><worksheet {ns}><sheetData><row r="1"><c r="A1" t="s">'
        '<v>0</v></c></row><row r="2"><c r="A2" t="s"><v>1</v></c></row></sheetData></worksheet>',
    }
    return crafted_zip([*(Member(name, text.encode()) for name, text in parts.items()), strings])


def test_an_xlsx_whose_shared_texts_unpack_to_340_mb_is_refused_before_openpyxl_opens_it(monkeypatch) -> None:
    """A 0.8 MB workbook took 261 s and 2 GB: openpyxl reads every shared text before the first cell."""
    from crafted_zips import Member
    from openpyxl import reader

    texts = b"<si><t>x</t></si>" * 60_000
    book = _xlsx_with_shared_strings(Member("xl/sharedStrings.xml", repeat=(texts, 340)))
    assert len(book) < 1024**2
    monkeypatch.setattr(reader.excel, "load_workbook", None)  # never reached (it would fail here)
    with pytest.raises(FileTooLargeError) as refused:
        _bounded(lambda: load_table(book, name="bomb.xlsx"), 5.0, 30.0)
    assert str(refused.value) == (
        "The Excel file's shared texts (xl/sharedStrings.xml) unpack to 330.7 MB, more than the 64.0 MB a sheet of "
        "1,000,000 cells needs; it was not opened. Save the sheet as CSV."
    )
    # within the size, too many texts: counted while streaming, before openpyxl parses them
    many = _xlsx_with_shared_strings(Member("xl/sharedStrings.xml", repeat=(b"<si><t/></si>" * 100_001, 10)))
    with pytest.raises(FileTooLargeError, match=r"hold more than 1,000,000 texts"):
        _bounded(lambda: load_table(many, name="many.xlsx"), 5.0, 30.0)
    monkeypatch.undo()
    small = _xlsx_with_shared_strings(Member("xl/sharedStrings.xml", b'<sst xmlns="http://schemas.openxmlformats.org'
                                                                     b'/spreadsheetml/2006/main"><si><t>zip</t></si>'
                                                                     b"<si><t>52001</t></si></sst>"))  # fmt: skip
    assert load_table(small, name="ok.xlsx").frame.to_dict("list") == {"zip": [52001]}


def test_a_file_with_crlf_line_ends_reads_its_whole_numbers_at_once_as_with_lf(tmp_path: Path, monkeypatch) -> None:
    """A file written on Windows (every line ending in CR LF) was parsed cell by cell as text
    (about 1.7-2x pandas' time at 10^6 records); its numbers are now read at once when the size,
    CRs counted, proves them written plainly, and the table is the one the LF file gives. A lone
    CR, or a number written with a leading zero, still goes the way of text."""
    lines = ["age,zip,sex", "30,52001,F", "41,52002,M", "7,52003,F"]
    (tmp_path / "lf.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "crlf.csv").write_bytes(("\r\n".join(lines) + "\r\n").encode())
    (tmp_path / "lead.csv").write_bytes(("\r\n".join([*lines, "007,52004,M"]) + "\r\n").encode())
    read_at_once = []
    real = loading_text._written_plainly
    monkeypatch.setattr(loading_text, "_written_plainly", lambda *a: read_at_once.append(real(*a)) or read_at_once[-1])
    lf, crlf = load_table(tmp_path / "lf.csv"), load_table(tmp_path / "crlf.csv")
    pd.testing.assert_frame_equal(lf.frame, crlf.frame)
    assert read_at_once == [True, True] and crlf.frame["age"].tolist() == [30, 41, 7]
    lead = load_table(tmp_path / "lead.csv")
    assert lead.frame["age"].tolist() == ["30", "41", "7", "007"]
    (tmp_path / "lone.csv").write_bytes(b"age,zip\r\n30,52001\r41,52002\r\n")  # a lone CR is a line end too
    assert load_table(tmp_path / "lone.csv").frame.to_dict("list") == {"age": [30, 41], "zip": [52001, 52002]}
    assert len(read_at_once) == 2  # both read as text, never at once


def test_a_bundled_sample_is_read_once_and_its_digest_is_the_files():
    """``load_sample`` is cached (every page and command reads the same frame, not the file again),
    and ``sample_sha256`` is the SHA-256 of the shipped file's bytes (a private release's budget
    is kept by it); each keeps its own cache."""
    import hashlib

    from anonlib.core.samples import SAMPLES, load_sample, sample_path, sample_sha256

    assert load_sample("caballero_table2b") is load_sample("caballero_table2b")
    assert load_sample.cache_info().hits >= 1 and sample_sha256.cache_info() is not None
    expected = hashlib.sha256(sample_path(SAMPLES["caballero_table2b"].file).read_bytes()).hexdigest()
    assert sample_sha256("caballero_table2b") == expected
