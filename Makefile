# Shortcuts for tasks.py (which needs only Python 3.11 + pip).
.PHONY: run test bench
run:
	python3 tasks.py run
test:
	python3 tasks.py test
bench:
	python3 tasks.py bench
