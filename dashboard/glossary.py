"""One glossary: every term the dashboard uses, in one plain sentence.

Pages take ``help=term_help("PPP")`` for a widget or metric and may end with
``glossary_expander(["PPP", "PoAC", ...])``; the sidebar links nothing
external. The vocabulary follows ``workflow.md``: records (not rows or
people), distinct combinations, quasi-identifiers, sensitive attributes,
suppressed records, k. A paper's own measure keeps its name and gets its
sentence here.

Example:
    >>> term_help("k")
    'The size of the smallest class: every record shares its quasi-identifier values with at least k - 1 other records.'
    >>> term_help("no such term")
    Traceback (most recent call last):
    ...
    KeyError: "'no such term' is not in the glossary"
"""

from __future__ import annotations

from collections.abc import Iterable

GLOSSARY: dict[str, str] = {
    # --- the vocabulary of the workflow
    "record": "One person's entry in the data; a row with a record count of 3 stands for 3 records.",
    "quasi-identifier": "A column an attacker could know from elsewhere (age, ZIP code, sex) and use to single a record out.",
    "sensitive attribute": "A column that must not be learnt about a person (a diagnosis, an income).",
    "identifier": "A column that names a person directly (name, record number); it is never analysed or released.",
    "record count": "A column saying how many identical records a row stands for.",
    "class": "The records that share the same values of every quasi-identifier (an equivalence class).",
    "k": "The size of the smallest class: every record shares its quasi-identifier values with at least k - 1 other records.",
    "distinct combination": "A distinct set of values of the chosen columns; the Arca & Hewett paper calls these rows.",
    "suppressed record": "A record removed from the release because its class fails the release target.",
    "release target": "What the released table must meet: k, the privacy models you switched on, and the largest share of records that may be suppressed.",
    "working copy": "The loaded file with the steps applied so far; the loaded file itself is never changed.",
    "step": "One transformation applied to the working copy (bands, a generalization, a policy, an aggregation, suppression); it can be undone.",
    "recipe": "A JSON file listing the loaded file's layout, the target and every step, so the release can be re-applied with `python -m anonlib apply`.",
    "generalization": "Replacing values by coarser ones (an age by its band, a ZIP code by its first digits) so more records share them.",
    "hierarchy": "How a column is generalized level by level: column 0 holds a value, column j its level-j generalization (the ARX file layout).",
    # --- privacy models (models.md)
    "(α,k)-anonymity": "No sensitive value makes up more than a share α of any class.",
    "distinct l-diversity": "Every class holds at least l different values of the sensitive attribute.",
    "entropy l-diversity": "The sensitive values of every class are at least as varied as l equally common values (entropy at least log l).",
    "recursive (c,l)-diversity": "In every class the most common sensitive value is rarer than c times the l-th and less common ones together.",
    "t-closeness": "The distribution of the sensitive attribute in every class is within distance t of its distribution in the whole table.",
    "δ-disclosure privacy": "Knowing a record's class changes the odds of any sensitive value by a factor of at most e^δ.",
    "β-likeness": "Knowing a record's class raises the share of any sensitive value by at most a relative β.",
    # --- the papers' measures
    "anonymity vector": "Entry j counts the classes of exactly j records; fewer small classes (to the left) is better (Caballero et al.).",
    "lexicographic index": "The position of an anonymity vector among all vectors of the same number of records, ordered from least to most anonymous (Caballero et al.).",
    "generalized k-anonymity": "k-anonymity judged by the whole anonymity vector, so two tables with the same k can still be ranked (Caballero et al.).",
    "PPP": "Proportion of protective peers: the share of records looking like a person to an attacker whose sensitive value differs from theirs; 0 reveals the value (Kroes et al.).",
    "NPP": "Number of protective peers: how many look-alike records have a different sensitive value (Kroes et al.).",
    "PoAC": "Proportion of alternatives considered: the share of other sensitive values still common enough among the look-alikes to keep the attacker guessing (Kroes et al.).",
    "p-upward privacy": "A person's minimum PPP over every combination of what an attacker might know is above p (Kroes et al.).",
    "q-downward privacy": "Every other sensitive value stays plausible (PoAC = 1) whatever the attacker knows (Kroes et al.).",
    "auxiliary information": "The quasi-identifier values an attacker is assumed to know about a person (Kroes et al.).",
    "dS / leakage": "Average information loss in bits: how much learning an attribute's value narrows down who a record is (Longpre et al., Arca & Hewett).",
    "normalized leakage": "dS divided by log2 of the number of records: 0 tells nothing, 1 identifies everyone.",
    "shield": "The Arca & Hewett paper's name for the quasi-identifiers a generalization protects.",
    "violation": "A distinct combination whose shield values occur in fewer than k records (Arca & Hewett); the release counts suppressed records instead.",
    "IAB": "Arca & Hewett's best-first search for the least generalization meeting k, pruning tables that cannot be better.",
    "KL loss": "Information loss of a policy: the Kullback-Leibler divergence (in nats) between the original and the generalized distribution of the quasi-identifiers (Xia et al.).",
    "distinguishability": "The frontier's risk: how well records can be told apart after generalization, relative to before (Benitez et al., Xia et al.).",
    "policy": "A way of merging each quasi-identifier's ordered values into intervals; one point of the risk-utility frontier (Xia et al.).",
    "frontier": "The policies no other evaluated policy beats on both risk and information loss (Xia et al.).",
    "discernibility": "Sum over released classes of their size squared, plus the number of records times each suppressed record: smaller means records are better hidden in large classes.",
    "non-uniform entropy": "Bits of information lost by replacing each value by its generalization (ARX's measure); lower keeps more detail.",
    "compactness": "Sum of distances from each area to the site of its aggregated region (Croft et al.); lower keeps regions compact.",
    "aggregated region": "Areas merged around one site (their Voronoi cell) and released as one region (Croft et al.).",
    "Safe Harbor": "HIPAA's rule-based de-identification: among others, ZIP codes cut to 3 digits and ages over 89 merged.",
}


def term_help(term: str) -> str:
    """The glossary sentence of ``term`` (for ``help=``)."""
    try:
        return GLOSSARY[term]
    except KeyError:
        raise KeyError(f"'{term}' is not in the glossary") from None


def glossary_markdown(terms: Iterable[str] | None = None) -> str:
    """The glossary (or some terms of it) as a Markdown list; the texts are ours, not user data.

    >>> glossary_markdown(["k"]).startswith("- **k**: The size")
    True
    """
    chosen = list(GLOSSARY) if terms is None else list(terms)
    return "\n".join(f"- **{term}**: {term_help(term)}" for term in chosen)


def glossary_expander(terms: Iterable[str] | None = None, label: str = "Glossary") -> None:
    """A closed expander listing ``terms`` (default: every term)."""
    import streamlit as st

    with st.expander(label):
        st.markdown(glossary_markdown(terms))
