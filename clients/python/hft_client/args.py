"""Flags -> Config (clients/README.md, "Flags"). Every bad value raises UsageError with one
line naming the flag, what was given and the fix; __main__ prints it and exits 2."""

import argparse
import math
import sys
from dataclasses import dataclass
from urllib.parse import urlsplit

PROG = "client-python"


class UsageError(Exception):
    """A flag or value the client cannot run with (exit 2)."""


@dataclass(frozen=True)
class Config:
    url: str  # server base URL; orders go to url + "/order"
    orders: int | None  # measured orders; None when --duration is given
    duration_s: float | None  # measured seconds instead of a count
    connections: int  # keep-alive connections = worker coroutines
    warmup: int  # orders sent first and not recorded
    rate: float | None  # open loop: total orders/s; None = closed loop
    timeout_ms: int  # per-request timeout
    scenario: str  # label copied into the result
    seed: int  # seed of the order stream
    output: str | None  # result JSON path; None = stdout and no .hlog

    @property
    def order_url(self) -> str:
        return self.url.rstrip("/") + "/order"

    @property
    def host_port(self) -> tuple[str, int]:
        parts = urlsplit(self.url)
        return parts.hostname or "", parts.port or 80


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse would print usage and exit; we want one line
        raise UsageError(f"{message}; see {PROG} --help")


def _parser() -> _Parser:
    p = _Parser(prog=PROG, allow_abbrev=False, description="hft-bench load client (asyncio + aiohttp)")
    # Values are taken as text and validated below, so each message can name the fix.
    p.add_argument("--url", default="http://127.0.0.1:8080", help="server base URL")
    p.add_argument("--orders", help="measured orders after warm-up (default 1000)")
    p.add_argument("--duration", help="instead of --orders: measure for S seconds")
    p.add_argument("--connections", default="10", help="concurrent keep-alive connections")
    p.add_argument("--warmup", default="100", help="orders sent first and not recorded")
    p.add_argument("--rate", help="open loop: total target orders/s (absent = closed loop)")
    p.add_argument("--timeout-ms", default="1000", help="per-request timeout in ms")
    p.add_argument("--scenario", default="adhoc", help="label copied into the result")
    p.add_argument("--seed", default="1", help="seed of the order stream (0 <= N < 2^64)")
    p.add_argument("--output", help="result JSON path; the .hlog goes beside it (default stdout)")
    return p


def _int(flag: str, text: str, lo: int, example: str, hi: int | None = None) -> int:
    bound = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
    try:
        value = int(text, 10)
    except ValueError:
        value = None
    if value is None or value < lo or (hi is not None and value > hi):
        raise UsageError(f"{flag} must be an integer {bound} (got {text!r}); pass e.g. {flag} {example}")
    return value


def _positive_float(flag: str, text: str, example: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise UsageError(f"{flag} must be a number > 0 (got {text!r}); pass e.g. {flag} {example}")
    return value


def _url(text: str) -> str:
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        parts = None
    if parts is None or parts.scheme != "http" or not parts.hostname:
        raise UsageError(
            f"--url must be an http://HOST:PORT URL (got {text!r}); pass e.g. --url http://127.0.0.1:8080"
        )
    return text


def _scenario(text: str) -> str:
    if not text:
        raise UsageError("--scenario must not be empty; pass e.g. --scenario small")
    return text


def parse_args(argv: list[str]) -> Config:
    """Parse the flags; raises UsageError on any bad flag or value. --help exits 0."""
    ns = _parser().parse_args(argv)
    if ns.orders is not None and ns.duration is not None:
        raise UsageError("--orders and --duration are mutually exclusive; pass only one of them")
    return Config(
        url=_url(ns.url),
        orders=None if ns.duration is not None else _int("--orders", ns.orders or "1000", 1, "1000"),
        duration_s=None if ns.duration is None else _positive_float("--duration", ns.duration, "10"),
        connections=_int("--connections", ns.connections, 1, "10"),
        warmup=_int("--warmup", ns.warmup, 0, "100"),
        rate=None if ns.rate is None else _positive_float("--rate", ns.rate, "5000"),
        timeout_ms=_int("--timeout-ms", ns.timeout_ms, 1, "1000"),
        scenario=_scenario(ns.scenario),
        seed=_int("--seed", ns.seed, 0, "1", hi=(1 << 64) - 1),
        output=ns.output,
    )


def print_usage_error(err: UsageError) -> None:
    print(f"{PROG}: {err}", file=sys.stderr, flush=True)
