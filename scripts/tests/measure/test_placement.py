"""placement.py's pure parts: CPU lists, flags vs the runner's variables, what is recorded."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hftbench.commands.check_runner import placement_warnings
from hftbench.errors import UsageError
from hftbench.measure import placement as placement_module
from hftbench.measure.fingerprint import runner_id, stable_fields
from hftbench.measure.placement import (
    ENV_CLIENT,
    ENV_CLIENT_NICE,
    ENV_CLIENT_RT,
    ENV_DUET_SPLIT,
    ENV_SERVER,
    UNPINNED,
    Placement,
    client_nice,
    client_rt_priority,
    format_cpu_list,
    may_lower_nice,
    online_cpus,
    parse_cpu_list,
    resolve,
)
from hftbench.publish.report import _placement_text

ONLINE = set(range(28))


def test_cpu_lists_parse_in_written_order_and_fold_back_into_ranges():
    assert parse_cpu_list("2", "--x") == (2,)
    assert parse_cpu_list("8-11, 2,3", "--x") == (8, 9, 10, 11, 2, 3)
    assert parse_cpu_list("1,0-2", "--x") == (1, 0, 2)
    assert format_cpu_list((0, 1, 2, 5, 7, 8)) == "0-2,5,7-8"
    assert format_cpu_list(parse_cpu_list("8-11,20-23", "--x")) == "8-11,20-23"


@pytest.mark.parametrize("bad", ["", "a", "1,,2", "3-1", "-1", "1-", "1-x"])
def test_a_bad_cpu_list_names_the_flag_and_the_part(bad):
    with pytest.raises(UsageError, match=r"^--server-cpus "):
        parse_cpu_list(bad, "--server-cpus")


def test_flags_win_over_the_runners_variables_which_fill_in_the_rest():
    env = {ENV_SERVER: "2-5", ENV_CLIENT: "6-13"}
    assert resolve(None, None, env, ONLINE) == Placement((2, 3, 4, 5), tuple(range(6, 14)))
    assert resolve("8", None, env, ONLINE) == Placement((8,), tuple(range(6, 14)))
    assert resolve(None, None, {}, ONLINE) == UNPINNED
    assert resolve(None, None, {ENV_SERVER: ""}, ONLINE) == UNPINNED


def test_a_cpu_that_is_not_online_is_refused_naming_the_source():
    with pytest.raises(UsageError, match=r"--client-cpus 1-3: CPU 2-3 is not online here \(online: 0-1\)"):
        resolve(None, "1-3", {}, {0, 1})
    with pytest.raises(UsageError, match=rf"^{ENV_SERVER} 9: CPU 9 is not online"):
        resolve(None, None, {ENV_SERVER: "9"}, {0, 1})


def test_only_the_per_thread_pinning_clients_get_cpus():
    p = Placement((2, 3), (6, 7, 8))
    assert p.client_flags("hft") == ["--cpus", "6-8"]
    assert p.client_flags("floor") == ["--cpus", "6-8"]
    assert p.client_flags("rust") == []
    assert p.confine_client() is not None
    assert p.describe() == {"server_cpus": "2-3", "client_cpus": "6-8"}
    assert (UNPINNED.client_flags("hft"), UNPINNED.confine_client()) == ([], None)
    assert UNPINNED.describe() == {}


def test_the_gate_places_a_tuned_runners_client_on_its_own_cpu_busy_polling(monkeypatch):
    monkeypatch.delenv(ENV_DUET_SPLIT, raising=False)
    tuned = Placement((2, 3, 4), (8, 9)).colocated()
    assert (tuned.server, tuned.clients, tuned.busy_poll) == ((4,), (8,), True)
    assert tuned.client_flags("hft") == ["--cpus", "8", "--busy-poll"]
    # by default a duet's two servers share the last server CPU: their noise cancels
    assert tuned.server_of_slot("a") == tuned.server_of_slot("b") == (4,)
    assert "second_server_cpus" not in tuned.describe()
    # asked for, each takes one, by slot (which build takes a slot is drawn)
    monkeypatch.setenv(ENV_DUET_SPLIT, "1")
    split = Placement((2, 3, 4), (8, 9)).colocated()
    assert (split.server_of_slot("a"), split.server_of_slot("b")) == ((4,), (3,))
    assert split.describe()["second_server_cpus"] == "3"
    one = Placement((4,), (8,)).colocated()  # one server CPU: both servers share it even so
    assert one.server_of_slot("a") == one.server_of_slot("b") == (4,)
    monkeypatch.setenv(ENV_DUET_SPLIT, "yes")
    with pytest.raises(UsageError, match=rf"^{ENV_DUET_SPLIT}='yes': pass 1"):
        Placement((2, 3, 4), (8, 9)).colocated()


def test_an_unpinned_gate_keeps_the_client_off_the_servers_cpu(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    shared = Placement().colocated()  # a 2-CPU VM: the servers on the last CPU, the client on the first
    assert (shared.server, shared.clients, shared.busy_poll) == ((1,), (0,), True)
    assert shared.client_flags("hft") == ["--cpus", "0", "--busy-poll"]  # no SCHED_FIFO unless asked
    servers_pinned = Placement((3,), ()).colocated()
    assert (servers_pinned.server, servers_pinned.clients) == ((3,), (0,))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {5})
    alone = Placement().colocated()  # one CPU: all three share it, and nobody spins
    assert (alone.server, alone.clients, alone.busy_poll) == ((5,), (5,), False)
    assert alone.client_flags("hft") == ["--cpus", "5"]  # sharing the servers' CPU: no priority over them


def test_the_busy_polling_clients_real_time_priority_is_a_runners_choice(monkeypatch):
    assert client_rt_priority({}) == 0  # FIFO starves its CPU's normal tasks, then stops 50 ms
    assert client_rt_priority({ENV_CLIENT_RT: "0"}) == 0
    assert client_rt_priority({ENV_CLIENT_RT: " 20 "}) == 20
    for bad in ("-1", "100", "high"):
        with pytest.raises(UsageError, match=f"{ENV_CLIENT_RT}=.*pass 0"):
            client_rt_priority({ENV_CLIENT_RT: bad})
    monkeypatch.setenv(ENV_CLIENT_RT, "1")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert Placement().colocated().client_flags("hft") == ["--cpus", "0", "--busy-poll", "--rt-priority", "1"]


def test_the_busy_polling_client_runs_at_nice_minus_20_unless_the_runner_says_or_the_kernel_refuses(
    monkeypatch, capsys
):
    monkeypatch.setattr(placement_module, "may_lower_nice", lambda: True)
    assert client_nice({}) == -20
    assert client_nice({ENV_CLIENT_NICE: "0"}) == 0
    assert client_nice({ENV_CLIENT_NICE: " -5 "}) == -5
    for bad in ("5", "-21", "high"):
        with pytest.raises(UsageError, match=f"{ENV_CLIENT_NICE}=.*-20"):
            client_nice({ENV_CLIENT_NICE: bad})
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.delenv(ENV_CLIENT_NICE, raising=False)
    assert Placement().colocated().nice == -20
    assert Placement((5,), (5,)).colocated().nice == 0  # sharing the servers' CPU: no priority over them
    monkeypatch.setattr(placement_module, "may_lower_nice", lambda: False)
    placement_module._say_nice_refused.cache_clear()
    assert client_nice({}) == 0 and client_nice({}) == 0
    assert capsys.readouterr().err.count("needs root or CAP_SYS_NICE") == 1  # once a process, not a round


def test_whether_a_nice_may_be_lowered_is_read_from_the_capabilities_and_the_limit_never_tried():
    with_cap = "Name:\tx\nCapEff:\t0000000000800000\n"  # bit 23: CAP_SYS_NICE
    without = "Name:\tx\nCapEff:\t0000000000000000\n"
    assert may_lower_nice(own=0, status=with_cap, nice_limit=0)
    assert not may_lower_nice(own=0, status=without, nice_limit=0)  # RLIMIT_NICE 0: nice 20 at best
    assert may_lower_nice(own=0, status=without, nice_limit=40)  # down to -20
    assert not may_lower_nice(own=-10, status=without, nice_limit=30)  # down to -10: not below it
    assert may_lower_nice(own=-20, status=without, nice_limit=0)  # nothing to lower
    own = os.getpriority(os.PRIO_PROCESS, 0)
    may_lower_nice()
    assert os.getpriority(os.PRIO_PROCESS, 0) == own


@pytest.mark.measuring  # a child confined to the lowest CPU, waited for (below)
@pytest.mark.skipif(not may_lower_nice(), reason="lowering a nice needs root or CAP_SYS_NICE")
def test_the_confined_client_process_gets_its_cpu_and_its_nice_and_its_sessions_group_too():
    cpu = min(os.sched_getaffinity(0))
    where = Placement((cpu,), (cpu,), nice=-7)
    probe = (
        "import os, pathlib; g = pathlib.Path('/proc/self/autogroup'); "
        "print(sorted(os.sched_getaffinity(0)), os.getpriority(os.PRIO_PROCESS, 0), "
        "g.read_text().split()[-1] if g.exists() else '-7')"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        preexec_fn=where.confine_client(),
        check=True,
        capture_output=True,
        text=True,
        start_new_session=True,
    ).stdout.split()
    assert out == [f"[{cpu}]", "-7", "-7"]


def test_pinned_runs_get_their_own_runner_id_and_unpinned_ones_keep_theirs():
    host = {"cpu_model": "i7-14700K", "cores": 28, "kernel": "6.14", "governor": "performance"}
    pinned = {**host, "placement": {"server_cpus": "2-5", "client_cpus": "6-13"}}
    assert "placement" not in stable_fields(host)
    assert stable_fields(pinned)["placement"] == pinned["placement"]
    assert runner_id(pinned) != runner_id(host)


def test_the_report_says_where_things_ran():
    assert _placement_text(None).startswith("not pinned")
    assert (
        _placement_text({"server_cpus": "2-5", "client_cpus": "6"}) == "server on CPUs 2-5, clients on CPUs 6"
    )


def test_online_cpus_reads_the_kernels_list(tmp_path):
    online = tmp_path / "online"
    online.write_text("0-3,6\n")
    assert online_cpus(online) == {0, 1, 2, 3, 6}
    assert online_cpus(tmp_path / "missing")  # falls back to os.cpu_count()


def test_check_runner_warns_when_the_placement_misses_the_isolated_cpus():
    assert placement_warnings("none", UNPINNED) == []
    assert placement_warnings("2-7", Placement(tuple(range(2, 8)), tuple(range(8, 28)))) == []
    (unused,) = placement_warnings("2-7", UNPINNED)
    assert "CPUs 2-7 are isolated but nothing is pinned there" in unused and ENV_SERVER in unused
    (spread,) = placement_warnings("2-9", Placement((2, 3), (8, 9, 10)))
    assert spread.startswith(f"{ENV_CLIENT} includes isolated CPUs 8-9")
    (shared,) = placement_warnings(None, Placement((0, 1), (1,)))
    assert shared.startswith("the server and the clients share CPUs 1")


# Measuring (conftest.py), as every test here that confines a child to the lowest CPU and waits
# for it: beside a busy loop on that CPU the parallel pass's SCHED_IDLE child never ran in 30 s
# (a clean clone's make test with one core busy, 2026-11-29).
@pytest.mark.measuring
def test_client_cpus_no_process_may_use_are_refused_before_the_run():
    Placement((), (min(online_cpus()),)).check()  # allowed: no error
    UNPINNED.check()
    with pytest.raises(UsageError, match=r"cannot run a client on CPUs 1000 "):
        Placement((), (1000,)).check()


@pytest.mark.measuring  # the same deadline, 20 s (above)
def test_a_server_build_without_cpus_is_confined_by_its_process_mask_instead(tmp_path):
    # The fake server's argparse knows no --cpus, like a base that `hftbench ab` built from
    # before the flag: it must still start, confined to the CPUs, with no --cpus passed.
    from hftbench.measure.server import Server
    from support.hftbench_fakes import make_bins

    cpu = min(online_cpus())
    server = Server(make_bins(tmp_path, {}) / "hft-server", tmp_path / "server.log", cpus=(cpu,))
    with server:
        status = Path(f"/proc/{server.proc.pid}/status").read_text()
        allowed = next(
            line.split()[-1] for line in status.splitlines() if line.startswith("Cpus_allowed_list")
        )
        assert allowed == str(cpu)
        assert "--cpus" not in server.describe()["flags"]
