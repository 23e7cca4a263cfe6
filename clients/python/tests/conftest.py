import sys
from pathlib import Path

# The client is run as `python -m hft_client` with PYTHONPATH=clients/python; do the same here.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
