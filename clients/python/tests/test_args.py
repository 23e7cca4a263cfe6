"""Flags: defaults, both spellings, and one clear message per bad value."""

import pytest
from hft_client.args import UsageError, parse_args


def test_defaults_follow_the_contract():
    cfg = parse_args([])
    assert cfg.url == "http://127.0.0.1:8080" and cfg.order_url == "http://127.0.0.1:8080/order"
    assert (cfg.orders, cfg.duration_s, cfg.connections, cfg.warmup) == (1000, None, 10, 100)
    assert (cfg.rate, cfg.timeout_ms, cfg.scenario, cfg.seed, cfg.output) == (None, 1000, "adhoc", 1, None)


def test_both_spellings_and_every_flag():
    cfg = parse_args(
        [
            "--url=http://127.0.0.1:9000/",
            "--orders",
            "5",
            "--connections=3",
            "--warmup",
            "0",
            "--rate=2.5",
            "--timeout-ms",
            "50",
            "--scenario",
            "small",
            "--seed",
            "18446744073709551615",
            "--output",
            "x.json",
        ]
    )
    assert cfg.order_url == "http://127.0.0.1:9000/order" and cfg.host_port == ("127.0.0.1", 9000)
    assert (cfg.orders, cfg.connections, cfg.warmup, cfg.rate, cfg.timeout_ms) == (5, 3, 0, 2.5, 50)
    assert (cfg.scenario, cfg.seed, cfg.output) == ("small", 2**64 - 1, "x.json")


def test_duration_replaces_orders():
    cfg = parse_args(["--duration", "1.5"])
    assert (cfg.orders, cfg.duration_s) == (None, 1.5)


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["--bogus"], "--bogus"),
        (["--connections", "0"], "--connections"),
        (["--orders", "-5"], "--orders"),
        (["--orders", "1.5"], "--orders"),
        (["--rate", "abc"], "--rate"),
        (["--rate", "0"], "--rate"),
        (["--rate", "nan"], "--rate"),
        (["--duration", "-1"], "--duration"),
        (["--warmup", "-1"], "--warmup"),
        (["--timeout-ms", "0"], "--timeout-ms"),
        (["--seed", str(2**64)], "--seed"),
        (["--url", "ftp://x"], "--url"),
        (["--url", "http://127.0.0.1:99999"], "--url"),
        (["--scenario", ""], "--scenario"),
        (["--orders", "5", "--duration", "1"], "--duration"),
        (["--conn", "5"], "--conn"),  # no abbreviations: every client accepts the same spellings
    ],
)
def test_bad_values_name_the_flag_on_one_line(argv, names):
    with pytest.raises(UsageError) as err:
        parse_args(argv)
    message = str(err.value)
    assert names in message and "\n" not in message


def test_help_exits_zero(capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_args(["--help"])
    assert exit_.value.code == 0
    assert "--connections" in capsys.readouterr().out
