"""The designs' names, declared once: how base and head were measured side by side in time.

judge/designs.py holds the test that matches each; measure/rig.py measures the rounds of
each (a duet, or paired rounds), and flags.choose_design picks one for a plan.
"""

from __future__ import annotations

UNPAIRED, PAIRED_ROUNDS, DUET = "unpaired", "paired-rounds", "duet"
