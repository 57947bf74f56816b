"""Reading a user's file: its text (UTF-8, errors naming the file and line), its records
(.json, .jsonl, .csv), and the value helpers the layouts share."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from geval.data.items import Item, Turn, positional
from geval.errors import DatasetError, GevalError

#: Python refuses to turn longer digit strings into an int; such a number is kept as its text.
MAX_INT_DIGITS = 4000


#: A lone UTF-16 surrogate escape (\ud800 without its pair): valid JSON syntax, not valid text.
LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
csv.field_size_limit(max(csv.field_size_limit(), 1 << 30))  # a long source document is one field


def read_utf8(path: Path, error: type[GevalError], missing: str, encoding: str = "utf-8") -> str:
    """The text of `path`. A missing file, a folder, an unreadable file or bytes that are not
    UTF-8 raise `error` with one line naming the file (and the line of the first bad byte)."""
    try:
        if path.is_dir():
            raise error(f"{path}: is a folder; name a file")
        if not path.is_file():
            raise error(f"{path}: {missing}")
        raw = path.read_bytes()
    except OSError as exc:
        raise error(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise error(f"{path}:{line}: not UTF-8 text (byte {exc.start}); re-save the file as UTF-8") from None


def read_records(path: Path) -> tuple[object, list[int] | None]:
    """Parse a .json, .jsonl or .csv file; errors name the file and the line.

    Returns the data and, for CSV and JSON lines, the line number of each record.
    """
    text = read_utf8(path, DatasetError, "no such file", encoding="utf-8-sig")
    if not text.strip():
        raise DatasetError(f"{path}: the file is empty")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _read_csv(path, text)
    if suffix == ".jsonl":
        return _read_jsonl(path, text)
    try:
        data = loads(text)
    except json.JSONDecodeError as exc:
        if suffix != ".json":
            raise DatasetError(f"{path}: unknown file type '{suffix}'; use .json, .jsonl or .csv") from None
        if exc.msg == "Extra data":
            try:  # a .json file that is really JSON lines
                return _read_jsonl(path, text)
            except DatasetError:
                pass
        raise DatasetError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON ({exc.msg}); correct it there and load "
                           "the file again") from None
    _check_text(path, text, data)
    return data, None


def loads(text: str) -> object:
    """json.loads, except that an integer too long for Python stays its digit text, and input
    nested too deeply to read is a JSONDecodeError like any other unreadable input."""
    try:
        return json.loads(text, parse_int=_int)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply to read", text, 0) from None


def _int(digits: str) -> int | str:
    return int(digits) if len(digits.lstrip("-")) <= MAX_INT_DIGITS else digits


def _check_text(path: Path, text: str, data: object, line: int | None = None) -> None:
    """Refuse JSON whose strings hold a lone surrogate escape: it cannot be stored as UTF-8."""
    match = LONE_SURROGATE.search(text)
    if match is None:
        return
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        where = line if line is not None else text.count("\n", 0, match.start()) + 1
        raise DatasetError(
            f"{path}:{where}: the escape {match.group(0)} is half of a UTF-16 pair, not a character; "
            "remove it or re-save the file from a tool that writes valid UTF-8"
        ) from None
    except (RecursionError, ValueError):
        pass


def _read_jsonl(path: Path, text: str) -> tuple[list, list[int]]:
    records, lines = [], []
    for number, line in enumerate(text.split("\n"), start=1):  # not splitlines: U+2028 may sit in a string
        if not line.strip():
            continue
        try:
            record = loads(line)
        except json.JSONDecodeError as exc:
            said = f"{exc.msg} column {exc.colno}" if exc.msg.endswith(" at") else exc.msg  # "... starting at"
            raise DatasetError(f"{path}:{number}: invalid JSON line ({said}); correct or remove that line and load "
                               "the file again") from None
        _check_text(path, line, record, number)
        records.append(record)
        lines.append(number)
    return records, lines


def _read_csv(path: Path, text: str) -> tuple[list[dict], list[int]]:
    # strict: a closing quote followed by text is an error, not a field that runs on through the lines after it
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    rows, lines, short, read_to = [], [], None, 0  # read_to: the last line of the last record read whole
    try:
        if not reader.fieldnames:
            raise DatasetError(f"{path}: no header row")
        read_to = reader.line_num
        if len(set(reader.fieldnames)) != len(reader.fieldnames):
            dupes = sorted(c for c, n in Counter(reader.fieldnames).items() if n > 1)
            raise DatasetError(f"{path}:1: duplicate column names {dupes}")
        for row in reader:
            if None in row:
                raise DatasetError(f"{path}:{reader.line_num}: more fields than the header has columns")
            if short is None and None in row.values():  # fewer: the csv module reads the missing ones as None
                short = (reader.line_num, sum(value is not None for value in row.values()))
            rows.append(row)
            lines.append(read_to := reader.line_num)
    except csv.Error as exc:
        _check_quotes_closed(path, text, read_to)  # a quote left open to the end of the file: said as such
        line = reader.reader.line_num  # where the csv module stopped (DictReader's own is the last whole record's)
        started = f" (its record starts on line {read_to + 1})" if line > read_to + 1 else ""
        if "expected after" in str(exc):
            raise DatasetError(f"{path}:{line}: a quoted field's closing quote is followed by text, not a "
                               f"comma{started}; write a quote meant as text twice (\"\") or close the field "
                               "where it ends") from None
        raise DatasetError(f"{path}:{line}: malformed CSV ({exc}){started}") from None
    if short is not None:
        raise DatasetError(f"{path}:{short[0]}: {short[1]} fields where the header has {len(reader.fieldnames)} "
                           "columns; give each row every column (an empty one as ,,)")
    if not rows:
        raise DatasetError(f"{path}: a header but no rows")
    return rows, lines


def _check_quotes_closed(path: Path, text: str, before: int) -> None:
    """Refuse a CSV whose record after line `before` opens a quoted field that no quote closes, naming the line
    it opens on (the csv module says only "unexpected end of data", at the file's end)."""
    handle = io.StringIO(text, newline="")  # lines as csv counts them
    for _ in range(before):
        handle.readline()
    opened = _unclosed_quote(handle.readlines())
    if opened is not None:
        line = before + opened
        raise DatasetError(f"{path}:{line}: unclosed quote (the field opened on line {line} runs to the end "
                           "of the file); close it, or double a quote meant as text (\"\")")


def _unclosed_quote(lines: list[str]) -> int | None:
    """The line (1 = the first of `lines`) where a quoted field opens that is still open at the
    end, reading as csv's default dialect does; None when every quoted field is closed."""
    state, opened = "start", None  # start of a field, inside an unquoted one, "quoted", or a quote in it
    for number, line in enumerate(lines, start=1):
        for char in line:
            if state == "quoted":
                state = "quote" if char == '"' else state
            elif state == "quote":  # "" is a quote inside the field; a delimiter ends it
                state = "quoted" if char == '"' else "start" if char in ",\r\n" else "field"
            elif char == '"' and state == "start":
                state, opened = "quoted", number
            else:
                state = "start" if char in ",\r\n" else "field"
    return opened if state == "quoted" else None


def numeric_scores(values: object, skipped: Counter, reason: str) -> tuple[tuple[float, ...], tuple[str, ...]]:
    """The numeric annotator scores of a value or list, with who gave each: position k of a list is
    annotator "#k", also when a value before it was skipped; the rest are counted in `skipped`.

    Free text such as "N/A (...)" is skipped and counted, never turned into a number.
    """
    values = values if isinstance(values, list) else [values]
    kept, who = [], []
    for annotator, value in zip(positional(len(values)), values):
        number = as_number(value)
        if number is None:
            skipped[reason] += 1
        else:
            kept.append(number)
            who.append(annotator)
    return tuple(kept), tuple(who)


def as_number(value: object) -> float | None:
    """A finite float from a number or numeric string, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def load_records(path: Path, data: object, fields: set[str],
                 items_of: Callable[[int, dict, str, Counter], list[Item]]) -> tuple[list[Item], Counter]:
    """The items of a list of records that have `fields`: `items_of(index, record, where,
    skipped)` gives each record's items (`where` names the record in messages; `skipped` counts
    the values left out). Returns the items and the counts."""
    skipped: Counter = Counter()
    items: list[Item] = []
    for index, record in enumerate(require_list_of_dicts(path, data, fields)):
        items.extend(items_of(index, record, f"record {index}", skipped))
    return items, skipped


def require_list_of_dicts(path: Path, data: object, keys: set[str]) -> list[dict]:
    """`data` as a list of dicts having `keys`; otherwise an error naming the record."""
    if not isinstance(data, list) or not data:
        raise DatasetError(f"{path}: expected a non-empty list of records")
    for index, record in enumerate(data):
        if not isinstance(record, dict):
            raise DatasetError(f"{path}: record {index} is not an object")
        missing = sorted(keys - record.keys())
        if missing:
            raise DatasetError(f"{path}: record {index} lacks field(s) {', '.join(missing)}")
    return data


def text_field(path: Path, record: dict, key: str, where: str) -> str:
    """A string field; a number is accepted as text, anything else is an error naming it."""
    value = record.get(key, "")
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise DatasetError(f"{path}: {where} field '{key}' should be text, got {type(value).__name__}")
    return value


def alternating_turns(lines: list[str], asks: str, answers: str) -> list[Turn]:
    """Label non-empty lines with alternating speakers so that `answers` speaks next."""
    lines = [line.strip() for line in lines if line.strip()]
    return [Turn(asks if (len(lines) - i) % 2 == 1 else answers, line) for i, line in enumerate(lines)]


def first_record_has(data: object, keys: set[str]) -> bool:
    """True when `data` is a non-empty list whose first record has all of `keys` (layout detection)."""
    return isinstance(data, list) and bool(data) and isinstance(data[0], dict) and keys <= data[0].keys()


def single_score(value: object, aspect: str, skipped: Counter) -> dict[str, tuple[float, ...]]:
    """{aspect: (score,)} for one numeric score; {} (and a count in `skipped`) otherwise."""
    number = as_number(value)
    if number is None:
        skipped["non-numeric human scores"] += 1
        return {}
    return {aspect: (number,)}
