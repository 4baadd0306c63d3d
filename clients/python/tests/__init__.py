"""The client's tests: run from clients/python as ``python3 -m unittest tests.test_adapters`` (or ``discover -s tests -t .``)."""
