"""The benchmark suite: ``python -m bench`` (or ``make bench``). See bench/README.md."""
