"""What every capability stands on: reading files (``loading``), a table with
column roles (``dataset``), the one equivalence-class counting kernel
(``equivalence``), how cells read as records, numbers and text (``cells``),
ARX-layout generalization hierarchies (``hierarchy``) and the first one offered
for a column (``default_hierarchy``, with the bundled taxonomies of ``taxonomy``),
shared information-loss metrics (``metrics``), work budgets (``budget``), the
bundled samples (``samples``) and the error classes (``errors``)."""
