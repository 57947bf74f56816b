"""studio.jobs: scoring several templates in the background with the scripted judge, and when the
job starts no more of them."""

from __future__ import annotations


from helpers import failing_for, make_items, make_template, scripted, wait_while_progressing

from geval.errors import JudgeError, JudgeUnreachable
from studio import jobs

FIRST = make_template()
SECOND = make_template(aspects=(("Naturalness", 1, 5, "Natural"),))
THIRD = make_template(aspects=(("Naturalness", 1, 7, "Natural"),))


def _finished(job: jobs.Job) -> jobs.Job:
    """`job` once it is done (the wait follows its progress: the template it is on, the items done)."""
    wait_while_progressing(lambda: job.done, lambda: (job.current, job.progress and job.progress.done), "the job",
                           poll=0.05)
    return job


def _run(tmp_path, judge) -> jobs.Job:
    """Three templates on 3 items, the job waited for."""
    return _finished(jobs.start(str(tmp_path / "store.sqlite"), make_items(3), [FIRST, SECOND, THIRD], judge,
                                "synthetic", {}))


def test_every_template_is_scored_in_turn(tmp_path):
    job = _run(tmp_path, scripted())
    assert [p.template for p in job.finished] == [FIRST.label, SECOND.label, THIRD.label]
    assert (job.not_started, job.error) == ([], "")


def test_a_judge_that_cannot_be_reached_ends_the_job_with_its_line_and_starts_no_other_template(tmp_path):
    judge = scripted(failing_for({0, 1, 2}, "cannot reach http://127.0.0.1:9/v1: connection refused",
                                 JudgeUnreachable))
    job = _run(tmp_path, judge)
    assert job.error == "cannot reach http://127.0.0.1:9/v1: connection refused" and job.finished == []
    assert job.not_started == [SECOND.label, THIRD.label] and len(judge.calls) == 1


def test_a_judge_error_starts_no_other_template_either(tmp_path):
    def refuse(prompt, aspect):
        raise JudgeError("the server refused the API key (401); check the key")

    job = _run(tmp_path, scripted(refuse))
    assert job.error == "the server refused the API key (401); check the key" and job.finished == []
    assert job.not_started == [SECOND.label, THIRD.label]


def test_a_failure_of_another_kind_does_not_stop_the_job(tmp_path):
    job = _run(tmp_path, scripted(failing_for({0, 1, 2}, "HTTP 500 from the server")))
    assert [p.status for p in job.finished] == ["failed"] * 3 and job.not_started == []
