"""The order stream (clients/README.md, "The order stream"): order k is a pure function of
(seed, k), identical in every client, and its body is compact JSON in a fixed key order.

The body is built by string formatting from precomputed pieces rather than json.dumps:
the bytes must match the other clients exactly and the encoder sits on the hot path.
"""

import time

MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
SYMBOLS = (2330, 2317, 2454, 2308, 2412, 2881, 2882, 1301)


def mix(z: int) -> int:
    """splitmix64's finalizer, mod 2^64."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def stream_x(seed: int, k: int) -> int:
    """splitmix64's output number k (0-based) from state ``seed``."""
    return mix((seed + (k + 1) * GOLDEN) & MASK64)


def _price_type_tif(r: int) -> tuple[str, str]:
    if r < 5:
        return "market", "ioc"
    if r < 75:
        return "limit", "rod"
    if r < 95:
        return "limit", "ioc"
    return "limit", "fok"


def order_fields(seed: int, k: int) -> dict:
    """The fields of order k that depend on (seed, k), price as its exact decimal text."""
    x = stream_x(seed, k)
    cents = 10000 + 5 * ((x >> 16) % 21 - 10)
    price_type, tif = _price_type_tif((x >> 32) % 100)
    return {
        "x": x,
        "buy_sell": "buy" if ((x >> 8) & 1) == 0 else "sell",
        "symbol": SYMBOLS[x % 8],
        "price": f"{cents // 100}.{cents % 100:02d}",
        "quantity": ((x >> 24) % 10 + 1) * 100,
        "price_type": price_type,
        "time_in_force": tif,
    }


def body_prefix(seed: int, k: int) -> str:
    """Everything of the body of order k up to the client_timestamp value."""
    f = order_fields(seed, k)
    return (
        f'{{"buy_sell":"{f["buy_sell"]}","symbol":{f["symbol"]},"price":{f["price"]},'
        f'"quantity":{f["quantity"]},"market_type":"common","price_type":"{f["price_type"]}",'
        f'"time_in_force":"{f["time_in_force"]}","order_type":"stock","user_def":"hftbench",'
        f'"client_timestamp":"'
    )


def encode_order(seed: int, k: int, timestamp: str) -> bytes:
    """The full JSON body of order k with the given client_timestamp text."""
    return (body_prefix(seed, k) + timestamp + '"}').encode()


class UtcStamp:
    """client_timestamp text "YYYY-MM-DDTHH:MM:SS.ffffffZ" of the wall clock, cheaply:
    the date-and-seconds part is formatted once per second and cached."""

    __slots__ = ("_second", "_head")

    def __init__(self) -> None:
        self._second = -1
        self._head = ""

    def format_ns(self, wall_ns: int) -> str:
        second, micros = divmod(wall_ns // 1000, 1_000_000)
        if second != self._second:
            self._second = second
            self._head = time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(second))
        return f"{self._head}{micros:06d}Z"

    def now(self) -> str:
        return self.format_ns(time.time_ns())
