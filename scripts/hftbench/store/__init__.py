"""store: the gh-pages history store: its entries, shards, baselines, and a comparison's side
read from it. Stage 4: may import publish (an entry stores the verdict's rows as the texts
render them), judge, measure and the top.

- `entry.py`          one commit's runs as one history-store entry
- `history.py`        the gh-pages history store: shards and index, add, read, baselines (only stores)
- `baseline.py`       a side from what a user names: run folders, or a history store's baseline
"""
