"""What ran, in words: ``stats.variant`` of a topg answer, as evaluation reports name it."""

from __future__ import annotations

from thinkgraph.methods.topg.config import ToPGConfig

# What ran, as `stats.variant` and evaluation reports name it: the entry, then the mode's own steps.
ENTRY_VARIANTS = {
    "ppr_passages": "entry=ppr_passages: the shared passage walk (question entity links, fact seeds, PPR over "
                    "entities and passages with its second hop) -> the best {per} proposition(s) of each "
                    "passage it ranks",
    "suggest_naive": "entry: SuggestNaive (the k propositions most similar to the question)",
    "suggest_hybrid": "entry=suggest_hybrid: SuggestNaive's cosine fused with BM25 over the propositions and "
                      "with those naming a linked question entity",
}
MODE_VARIANTS = {
    "naive": "naive: the entry's propositions answer",
    "local": "local: Alg. 1 ({select}Suggest-local on M seeded on the pool, Eval, NextQ; max_iter={max_iter})",
    "global": "global: Alg. 2 anchors (decomposition, {select}Rocchio walks), Alg. 3 communities, report",
}
NO_LLM_VARIANTS = {
    "naive": "no LLM: the entry's propositions",
    "local": "no LLM: Alg. 1 with every suggestion kept (no Select, Eval or NextQ), max_iter={max_iter} "
             "Suggest-local walks on M seeded on the pool",
    "global": "no LLM: Alg. 2 anchors from the question alone, every suggestion kept (no decomposition or "
              "Select), communities chosen (no intermediate answers, no report)",
}
NO_LLM_EVIDENCE = "evidence: the passages of the propositions in the order collected"
NO_LLM_WALK_EVIDENCE = "evidence: the passages of the propositions ranked by a walk on M among them (reader_order=walk)"
SELECT_VARIANTS = {True: "Select, ", False: "no Select: every suggestion kept, "}


def variant(config: ToPGConfig, *, with_llm: bool) -> str:
    """Exactly what ran, in words: the entry points, the mode's steps (and the ablations switched on:
    no Select, lam = 1) and, without an LLM, the evidence."""
    entry = ENTRY_VARIANTS[config.entry].format(per=config.entry_per_passage)
    walk = "" if config.mode == "naive" or config.lam < 1 else "; lam=1: M = T_s (no query-aware transition)"
    if with_llm:
        steps = MODE_VARIANTS[config.mode].format(max_iter=config.max_iter, select=SELECT_VARIANTS[config.select])
        extras = f"; select_max={config.select_max}" if config.mode == "local" and config.select_max else ""
        selects = config.mode != "naive" and config.select
        extras += f"; select_form={config.select_form}" if selects and config.select_form != "list" else ""
        fill = f", reader_fill_passages={config.reader_fill_passages}" if config.reader_fill == "walk" else ""
        order = f"; reader_order={config.reader_order}; reader_fill={config.reader_fill}{fill}" \
            if config.mode == "local" and config.reader == "shared" else ""
        return f"{steps}{extras}{walk}; {entry}{order}"
    ranked = config.mode == "local" and config.reader_order == "walk"
    evidence = NO_LLM_WALK_EVIDENCE if ranked else NO_LLM_EVIDENCE
    return f"{NO_LLM_VARIANTS[config.mode].format(max_iter=config.max_iter)}{walk}; {entry}; {evidence}"
