"""The paper's example datasets, ready for the pages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ...core.dataset import Dataset, Role
from ...core.errors import ParameterError, join_names

# ------------------------------------------------------------- example datasets


@dataclass(frozen=True)
class PeersExample:
    """A dataset of the paper (Table 1 or 2): its sample, variables, and the paper's sensitive ones."""

    key: str
    title: str
    sample: str
    variables: tuple[str, ...]
    sensitive: tuple[str, ...]


EXAMPLES: dict[str, PeersExample] = {
    e.key: e
    for e in [
        PeersExample(
            "kroes_table1",
            "Kroes et al. Table 1 (age in 10-year bands, option 2)",
            "kroes_table1_option2",
            ("Diagnosis", "Gender", "Age"),
            ("Diagnosis",),
        ),
        PeersExample(
            "adult",
            "Adult (paper Table 2: 9 variables)",
            "adult",
            (
                "sex",
                "age",
                "race",
                "marital-status",
                "education",
                "native-country",
                "workclass",
                "income",
                "occupation",
            ),
            ("income",),
        ),
        PeersExample(
            "diabetes",
            "Diabetes (paper Table 2: 8 variables)",
            "diabetes",
            ("gender", "age", "race", "num_lab_procedures", "num_medications", "change", "diabetesMed", "readmitted"),
            ("readmitted",),
        ),
        PeersExample(
            "cervical_cancer",
            "Cervical cancer (paper Table 2: 4 variables)",
            "cervical_cancer",
            ("Num of pregnancies", "Smokes", "Age", "Biopsy"),
            ("Biopsy",),
        ),
    ]
}


def example_dataset(key: str) -> Dataset:
    """A paper dataset as a Dataset: its variables as quasi-identifiers, the
    paper's sensitive variable as sensitive, other columns ignored, and rows
    with a missing value in those variables dropped (as the paper did).

    >>> frame, dropped = example_dataset("cervical_cancer").analysis_frame()
    >>> frame.shape, dropped
    ((789, 4), 69)
    """
    from ...core.samples import load_sample

    if key not in EXAMPLES:
        raise ParameterError(f"There is no example called '{key}'. Examples: {join_names(EXAMPLES)}.")
    example = EXAMPLES[key]
    base = load_sample(example.sample)
    roles: Mapping[str, Role] = {}
    for column in base.frame.columns:
        if column in example.sensitive:
            roles[column] = Role.SENSITIVE
        elif column in example.variables:
            roles[column] = Role.QUASI_IDENTIFIER
        else:
            roles[column] = Role.IDENTIFIER if base.roles.get(column) is Role.IDENTIFIER else Role.IGNORE
    return Dataset(name=example.title, frame=base.frame, roles=roles, missing="drop", notes=base.notes).validated()
