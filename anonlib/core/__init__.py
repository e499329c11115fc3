"""What every capability stands on: reading files (``loading``), a table with
column roles (``dataset``), the one equivalence-class counting kernel
(``equivalence``), ARX-layout generalization hierarchies (``hierarchy``),
shared information-loss metrics (``metrics``), the bundled samples
(``samples``) and the error classes (``errors``)."""
