"""Citations narrowed to their best-matching sentence, with the sentence's own span."""

from __future__ import annotations

from thinkgraph.citations import best_sentence, focus_answer, sentence_spans
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
