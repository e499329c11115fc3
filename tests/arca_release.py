"""The command line's releases of ARCA's Table 1 (``arca_table1``, records per row in ``#Rec.``) that
the tests share: the quasi-identifiers shielded, and the other columns the product guesses as
quasi-identifiers kept unchanged by decision (``anonymize`` refuses to release them silently)."""

# Zip, Age and AC shielded (the paper's example); Sex, Weight and Race kept
ARCA_RELEASE = ["anonymize", "--sample", "arca_table1", "--shield", "Zip,Age,AC", "--keep", "Sex,Weight,Race"]
# Zip alone shielded, every other guessed quasi-identifier kept (the bad-input cases' release)
ARCA_ZIP = ["anonymize", "--sample", "arca_table1", "--shield", "Zip", "--keep", "Sex,AC,Age,Weight,Race"]
# Zip and Age shielded, AC kept with the others
ARCA_ZIP_AGE = ["anonymize", "--sample", "arca_table1", "--shield", "Zip,Age", "--keep", "Sex,AC,Weight,Race"]
