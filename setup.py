"""Package layout only (everything else is in pyproject.toml): every package under
anonlib/, plus data/samples/ installed as anonlib.bundled_samples, so the samples
stay at the top of the repository and are still found after `pip install .`."""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["anonlib", "anonlib.*"]) + ["anonlib.bundled_samples"],
    package_dir={"anonlib.bundled_samples": "data/samples"},
    exclude_package_data={"anonlib.bundled_samples": ["make_samples.py"]},
)
