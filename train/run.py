#!/usr/bin/python3
"""svtrain entry point: /usr/bin/python3 train/run.py matrix --help"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from svtrain.cli import main  # noqa: E402

if __name__ == "__main__":
    main()
