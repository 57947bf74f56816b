"""The reports shipped in reports/ are made by today's code from judgments kept beside them
(reports/kept/, one `geval judgments export` file per dataset; `bash reports/make.sh` makes them all
again). One small report is made again here, in a fresh store under tmp_path, from its kept file alone,
and has every section a report of today has, the same as the shipped one (made with the options
reports/make.sh gives)."""

from __future__ import annotations

import re
from pathlib import Path

from geval import cli

REPORTS = Path(__file__).resolve().parent.parent / "reports"
KEPT = REPORTS / "kept"
SMALL = "personachat_usr_sample"
#: What every report of today opens with or holds (a report from before this round lacked the first and the
#: last three).
SECTIONS = ("## Bottom line", "## Summary", "## Can the judge replace an annotator?",
            "## Systems as people would score them", "## How the judge errs", "## Signatures")


def headings(markdown: str) -> list[str]:
    return [line for line in markdown.splitlines() if line.startswith("#")]


def test_a_shipped_report_is_made_again_from_its_kept_judgments_with_every_section(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GEVAL_STORE", str(tmp_path / "store.sqlite"))
    assert cli.main(["judgments", "import", str(KEPT / f"{SMALL}.jsonl.xz")]) == 0
    assert "read 200 judgments" in capsys.readouterr().out
    assert cli.main(["report", SMALL, "--out", str(tmp_path), "--baselines", "rouge-l,bleu,chrf,length,bertscore",
                     "--calibrate", "--ensemble"]) == 0
    made = (tmp_path / f"{SMALL}.md").read_text(encoding="utf-8")
    shipped = (REPORTS / f"{SMALL}.md").read_text(encoding="utf-8")
    for section in SECTIONS:
        assert section in headings(made), section
    assert headings(made) == headings(shipped)
    first = made.index("## Bottom line")
    assert first < made.index("## Summary")  # the bottom line first
    embedded = re.compile(r"embedded Qwen2\.5-Coder 1\.5B")
    assert embedded.search(made[first:made.index("## Summary")])  # judged by the embedded judge, kept


def test_every_shipped_report_has_its_judgments_kept_and_none_is_from_before():
    kept = {path.name.removesuffix(".jsonl.xz") for path in KEPT.glob("*.jsonl.xz")}
    made_from_kept = {path.stem for path in REPORTS.glob("*.md")} - {"README", "learning_curves", "summeval_systems"}
    assert made_from_kept == kept
    for path in REPORTS.glob("*.md"):
        text = path.read_text(encoding="utf-8")
        assert "a thesis that ran G-EVAL" not in text, path.name
        if path.stem in kept:
            assert "## Bottom line" in text, path.name
