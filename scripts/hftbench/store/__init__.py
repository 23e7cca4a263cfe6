"""store: the gh-pages history store: its entries, shards, baselines, and a comparison's side
read from it. Stage 4: may import judge, measure and the top, never publish: an entry keeps the
verdict's stored copy as publish/store_text.py made it, and the store renders nothing.

- `entry.py`          one commit's runs as one history-store entry
- `history.py`        the gh-pages history store: shards and index, add, read, baselines (only stores)
- `baseline.py`       a side from what a user names: run folders, or a history store's baseline
"""
