"""The cells of the network scenarios (a scenario with `link:`), for `hftbench run`.

Each runs over the scenario's path (netpath.py): the clients here, hft-server in its own
namespace, hft-linkem between them started afresh for every cell with the profile, and
stopped after it, so each cell carries the emulator's own account of what it added (frames,
losses, the one-way delay it applied as a distribution: `Cell.link`). The floor of a
network scenario is the same path with zero added delay: `hft-floor --listen` in the
server's namespace, `hft-floor --remote` here, through the emulator: the emulator's own
cost is that floor against the loopback floor (or against the veth-only `none` floor).

When the host cannot build the path (not root, no `ip`), every network cell fails with the
missing piece named, and the run goes on with the others.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
from collections.abc import Callable

from ..config import FLOOR, LinkProfile, Scenario
from ..results import Cell
from . import netpath, procs
from .cell import CellSetup, client_binary, result_name, run_cell
from .server import Server, ServerError

FLOOR_LISTENING = re.compile(r"hft-floor listening on (http://[\d.]+:\d+)")


class NetworkCells:
    """Builds, switches and removes the paths; runs one network cell at a time."""

    def __init__(
        self,
        links: dict[str, LinkProfile],
        setup: CellSetup,
        server_flags: list[str] | None,
        note: Callable[[str], None],
    ) -> None:
        self.links = links
        self.setup = setup
        self.server_flags = list(server_flags or [])
        self.note = note
        self.path: netpath.NetPath | None = None
        self.server: Server | None = None
        self.swept = False
        self.errors: dict[str, str] = {}  # profile -> why its path cannot be built (not retried)

    def run(self, scenario: Scenario, client: str, repeat: int) -> Cell:
        profile = self.links[scenario.link or ""]
        rel = result_name(scenario.name, client, repeat, self.setup.repeats)

        def failed(reason: str) -> Cell:
            return Cell.failure(scenario.name, client, repeat, f"link {profile.name}: {reason}", file=rel)

        try:
            path = self._path_for(profile)
        except netpath.NetPathError as exc:
            self.errors.setdefault(profile.name, str(exc))  # the host will not change during the run
            return failed(str(exc))
        link_stats = (self.setup.run_dir / rel).with_suffix(".linkem.json")
        echo = None
        try:
            # The emulator first: the server's health check and the cell both cross it.
            path.start_link(link_stats, self.setup.run_dir / "linkem.log", zero_delay=client == FLOOR)
            server, floor_url = None, None
            if client == FLOOR:
                echo, floor_url = self._start_echo(path)
            else:
                server = self._server(path)
            cell = run_cell(self.setup, server, scenario, client, repeat, floor_url=floor_url)
        except (netpath.NetPathError, ServerError) as exc:
            return failed(str(exc))
        finally:
            cell_link = path.stop_link()
            if echo is not None:
                procs.stop(echo)
        return dataclasses.replace(cell, link=cell_link)

    def close(self) -> None:
        """Stop the server, remove the path: on every way out of the run."""
        if self.server is not None:
            self.server.stop()
            self.server = None
        if self.path is not None:
            self.path.close()
            self.path = None

    def _path_for(self, profile: LinkProfile) -> netpath.NetPath:
        if profile.name in self.errors:
            raise netpath.NetPathError(self.errors[profile.name])
        if self.path is not None and self.path.profile.name == profile.name:
            return self.path
        missing = netpath.missing_requirements()
        if missing:
            raise netpath.NetPathError(missing)
        ip = netpath.ip_binary() or "ip"
        if not self.swept:
            self.swept = True
            removed = netpath.sweep_leftovers(ip)
            if removed:
                self.note(f"removed what an earlier crashed run left: {', '.join(removed)}")
        self.close()  # another profile's path: one at a time
        self.path = netpath.NetPath(profile, self.setup.bins_dir, ip).open()
        return self.path

    def _server(self, path: netpath.NetPath) -> Server:
        if self.server is not None and self.server.alive():
            return self.server
        if self.server is not None:
            self.note(
                f"hft-server in {path.ns_srv} exited (status {self.server.proc.returncode}); restarting it"
            )
        self.server = Server(
            self.setup.bins_dir / "hft-server",
            self.setup.run_dir / "server-net.log",
            self.server_flags,
            cpus=self.setup.placement.server,
            host=path.server_ip,
            wrapper=path.in_server_ns(),
        )
        self.server.start()
        return self.server

    def _start_echo(self, path: netpath.NetPath) -> tuple[subprocess.Popen[bytes], str]:
        """`hft-floor --listen` in the server's namespace; its URL."""
        cmd = [
            *path.in_server_ns(),
            str(client_binary(self.setup.bins_dir, FLOOR)),
            "--listen",
            f"{path.server_ip}:0",
        ]
        proc, match = procs.start_ready(
            cmd,
            self.setup.run_dir / "floor-net.log",
            FLOOR_LISTENING,
            name="hft-floor --listen",
            timeout_s=netpath.READY_TIMEOUT_S,
            preexec=procs.die_with_parent,
            error=netpath.NetPathError,
        )
        return proc, match.group(1)
