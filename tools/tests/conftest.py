import os
import sys

TESTS = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.dirname(TESTS)
for p in (TOOLS, TESTS):
    if p not in sys.path:
        sys.path.insert(0, p)
