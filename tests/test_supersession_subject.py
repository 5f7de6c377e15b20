"""A correction supersedes the record holding the value it replaces, and shares that record's
subject, not one word of it (issue 23): the offline extractor's holder test
(:func:`dreamd.models.offline.compare.clauses.holder_words`). Examples are invented for this
test."""

from __future__ import annotations

from tests.test_supersession_linked import _run


def test_a_change_sharing_one_word_with_a_record_of_another_subject_names_none() -> None:
    printer, wifi, canon = _run("The office printer is a Brother HL-L2350.", "Ok.", "Actually the office wifi is Eduroam now.",
                                "Ok.", "Actually the office printer is a Canon now.", "Ok.")
    assert "Brother" in printer["description"] and "Eduroam" in wifi["description"]
    assert "supersedes" not in wifi  # "office" only: the wifi is not the printer
    assert canon["supersedes"] == printer["name"]  # the change saying the printer's subject still names it


def test_a_worded_change_naming_its_subject_links_on_that_one_word() -> None:
    # "the queue" is the subject the worded change names: one shared word is enough beside two names
    queue, moved = _run("Our job queue is Beanstalkd on the old box.", "Ok.",
                        "Actually the queue switched to NATS last month.", "Ok.")
    assert "Beanstalkd" in queue["description"] and "NATS" in moved["description"]
    assert moved["supersedes"] == queue["name"]
