"""Citations narrowed to their best-matching sentence, with the sentence's own span."""

from __future__ import annotations

from thinkgraph.citations import best_sentence, best_span, focus_answer, question_parts, sentence_spans
from thinkgraph.models import Answer, Citation

PASSAGE = ("The club was founded in 1988. It rows on the Velden lake.\nLena Sorensen trained with coach "
           "Joseph Okafor for six years. The northern cup was won twice.")


def test_sentences_are_split_without_surrounding_space() -> None:
    spans = sentence_spans(PASSAGE)
    assert [PASSAGE[s:e] for s, e in spans][:3] == ["The club was founded in 1988.", "It rows on the Velden lake.",
                                                    "Lena Sorensen trained with coach Joseph Okafor for six years."]


def test_hard_wrapped_lines_stay_one_sentence_but_headings_and_items_do_not() -> None:
    text = ("# Lena Sorensen\n\nLena Sorensen rowed for the club, and her coach\nwas Joseph Okafor of Velden.\n"
            "- a list item\n- another item\n\nA closing line without a stop")
    assert [text[s:e] for s, e in sentence_spans(text)] == [
        "# Lena Sorensen", "Lena Sorensen rowed for the club, and her coach\nwas Joseph Okafor of Velden.",
        "- a list item", "- another item", "A closing line without a stop"]


def test_best_sentence_weighs_answer_words_and_finds_none_without_overlap() -> None:
    s, e = best_sentence(PASSAGE, "Who trained Lena Sorensen?", "Joseph Okafor")
    assert PASSAGE[s:e].startswith("Lena Sorensen trained")
    s, e = best_sentence(PASSAGE, "When was it founded?", None)
    assert PASSAGE[s:e] == "The club was founded in 1988."
    assert best_sentence(PASSAGE, "zebra?", None) is None


def test_focus_narrows_only_whole_passage_citations_to_document_offsets() -> None:
    offset = 500
    whole = Citation("d", "c1", offset, offset + len(PASSAGE), PASSAGE[:300])
    partial = Citation("d", "c1", offset, offset + 10, PASSAGE[:10])
    answer = Answer("Who trained Lena Sorensen?", "ppr", "Joseph Okafor", "answered", citations=[whole, partial])
    focus_answer(answer, {"c1": PASSAGE})
    local = PASSAGE.index("Lena")
    assert (whole.start, whole.quote) == (offset + local, PASSAGE[local:whole.end - offset])
    assert whole.quote.endswith("six years.")
    assert (partial.start, partial.end) == (offset, offset + 10)


def test_a_heading_does_not_win_a_tie_with_a_sentence() -> None:
    from thinkgraph.citations import best_sentence

    text = "# Project Falcon\n\nProject Falcon was a survey of the northern coast, finished in 1999."
    start, end = best_sentence(text, "What was Project Falcon?")
    assert text[start:end].startswith("Project Falcon was a survey")
    only = "# Project Falcon\n\nThe survey ended in 1999."
    start, end = best_sentence(only, "What was Project Falcon?")
    assert only[start:end] == "# Project Falcon"  # the only line naming it still wins


POLK = ("Iowa was part of the Louisiana Purchase. On December 28, 1846, Iowa became the 29th state in the Union "
        "when President James K. Polk signed the admission bill into law. Dr. J. R. Smith paid $4.50 at 3 p.m. "
        "on Jan. 5. She said \"It is done. Go home.\" and left.")


def test_the_segmenter_knows_abbreviations_initials_decimals_and_quotations() -> None:
    sentences = [POLK[s:e] for s, e in sentence_spans(POLK)]
    assert sentences[1].endswith("President James K. Polk signed the admission bill into law.")
    assert sentences[2] == "Dr. J. R. Smith paid $4.50 at 3 p.m. on Jan. 5."
    assert sentences[3] == 'She said "It is done. Go home." and left.'


def test_the_polk_sentence_is_quoted_whole() -> None:
    s, e = best_sentence(POLK, "Who was president when Iowa became a state?")
    assert POLK[s:e].startswith("On December 28, 1846") and POLK[s:e].endswith("into law.")


OBSERVATORY = ("The Harbor Hill Observatory is an astronomical observatory on Harbor Hill, above the port town of "
               "Kestrel Bay. It was founded in 1887 by the shipbuilder Adela Morrow, who wanted sailors trained in "
               "navigation. The first building was a brick tower.\n\nThe observatory's main instrument is the Morrow "
               "Refractor. The Harbor Hill Observatory is open on Fridays.")


def test_the_sentence_that_answers_beats_the_one_that_restates_and_brings_its_referent() -> None:
    s, e = best_span(OBSERVATORY, "Who founded the Harbor Hill Observatory?")
    shown = OBSERVATORY[s:e]
    assert "Adela Morrow" in shown  # not only "The Harbor Hill Observatory is an ... observatory"
    assert shown.startswith("The Harbor Hill Observatory is") and shown.endswith("trained in navigation.")


PEOPLE = ("Ilse Brandt was an optician from Leipzig. Besides the lens of the Morrow Refractor, her workshop "
          "produced the lens of the Skarn Lighthouse. She was trained by her uncle, the instrument maker Karl Brandt."
          "\n\nJoseph Okafor was an astronomer born in Lagos. He was the first director of the observatory. He "
          "compiled the Harbor Hill Catalogue and trained a generation of observers, among them Lena Sorensen.")


def test_each_part_of_a_question_gets_its_sentence() -> None:
    assert question_parts("Who made the lens of the Skarn Lighthouse, and who trained her?") == [
        "Who made the lens of the Skarn Lighthouse", "who trained her"]
    s, e = best_span(PEOPLE, "Who made the lens of the Skarn Lighthouse, and who trained her?")
    shown = PEOPLE[s:e]
    assert "Ilse Brandt" in shown and "Karl Brandt" in shown and "Okafor" not in shown


def test_a_pronoun_brings_the_sentence_that_names_its_referent_within_the_paragraph() -> None:
    s, e = best_span(PEOPLE, "Who trained Lena Sorensen?")
    shown = PEOPLE[s:e]
    assert shown.startswith("Joseph Okafor was an astronomer") and shown.endswith("among them Lena Sorensen.")
    assert "Karl Brandt" not in shown  # never across the paragraph break


def test_a_passage_sharing_no_word_shows_its_lead_sentence_not_the_whole_chunk() -> None:
    text = "# Skarn\n\nThe island lies west of the bay. Ferries call twice a day."
    whole = Citation("d", "c9", 0, len(text), text)
    focus_answer(Answer("Who built the tower?", "ppr", None, "evidence_only", citations=[whole]), {"c9": text})
    assert whole.quote == "The island lies west of the bay." and (whole.start, whole.end) == (9, 41)


def test_an_excerpt_is_cut_between_words() -> None:
    from thinkgraph.citations import excerpt

    text = "whose lens was ground by the optician Ilse Brandt in Leipzig"
    assert excerpt(text, 200) == text and excerpt("a\n  b", 10) == "a b"
    assert excerpt(text, 47) == "whose lens was ground by the optician Ilse…"
    assert len(excerpt(text, 47)) <= 47 and excerpt("x" * 50, 10) == "x" * 9 + "…"
