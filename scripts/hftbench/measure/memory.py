"""The server's resident memory, read at both ends of each cell: what memory per order is
measured from (judge/memory.py).

Read from the side's cgroup where it has one: its anonymous memory (memory.stat `anon`, v1
`total_rss`: cgroup_parsing.anon_bytes), which holds every process in the group, so a head that
keeps memory in a child it forked still shows it. Without a group: /proc/<pid>/status
`RssAnon` of the server and its live descendants. Anonymous memory, not the whole of it: the
page cache of server.log and of the binary, and socket buffers, are charged to the group too
and move with the host, not with what the server keeps.

When: after the cell's POST /stats/reset (before the client's first order) and after its
GET /stats at the end; the difference over the orders the server answered between (its
`total_orders`, warm-up included, as CPU per order takes them) is the cell's memory per
order. Each cell stands for itself (a reset empties the books, so what a cell's book held is
free again for the next cell's), and what the allocator does when the server is young (the
first cell's arenas, a thread's stack) happens alike on both sides of a round: the judge
compares head's bytes per order with base's of the same round, a difference, never a level.

Where neither can be read, the cell says why (`server_memory_unread`) and never fails for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

from . import procs
from .proc_sampler import rss_anon_kib

CGROUP, PROC = "cgroup", "proc"


@dataclass(frozen=True)
class Reading:
    """One reading of a server's anonymous resident memory: its bytes and where they were read,
    or why none could be."""

    bytes: int | None
    source: str | None = None  # CGROUP | PROC
    why: str | None = None  # when bytes is None


def resident(server: Any) -> Reading:
    """The anonymous memory resident in `server` (measure/server.Server) now: its cgroup's, or
    /proc's for the server and its live descendants; never raises."""
    group = getattr(server, "cgroup", None)
    if group is not None and (anon := group.anon_memory()) is not None:
        return Reading(anon, CGROUP)
    proc = getattr(server, "proc", None)
    if proc is None:
        return Reading(None, why="the server is not running")
    total = 0
    for pid in (proc.pid, *procs.descendants(proc.pid)):
        try:
            with open(f"/proc/{pid}/status") as f:
                total += 1024 * rss_anon_kib(f.read())
        except FileNotFoundError:
            if pid == proc.pid:
                return Reading(None, why=f"the server (pid {pid}) has exited")
            continue  # a child that exited meanwhile holds nothing now
        except (OSError, ValueError) as exc:
            where = "its cgroup's memory.stat, and " if group is not None else "no cgroup, and "
            return Reading(None, why=f"{where}/proc/{pid}/status unreadable ({exc})")
    return Reading(total, PROC)


class MemoryFields(TypedDict, total=False):
    """results.Cell's memory keywords: both readings and where, or why they are missing."""

    server_memory_before_bytes: int
    server_memory_after_bytes: int
    server_memory_from: str
    server_memory_unread: str


def cell_fields(before: Reading, after: Reading) -> MemoryFields:
    """A measured cell's memory keywords (results.Cell): both readings and where they were read,
    or `server_memory_unread` saying why not (a reading missing, or the two from different
    places, whose difference would measure the places)."""
    if before.bytes is None or after.bytes is None:
        which = "before" if before.bytes is None else "after"
        why = before.why if before.bytes is None else after.why
        return {"server_memory_unread": f"the server's memory could not be read {which} the cell: {why}"}
    if before.source != after.source:
        return {
            "server_memory_unread": f"the server's memory was read from {before.source} before the cell "
            f"and from {after.source} after it"
        }
    return {
        "server_memory_before_bytes": before.bytes,
        "server_memory_after_bytes": after.bytes,
        "server_memory_from": before.source,
    }
