"""Hot-path costs, run with `pytest --benchmark-only clients/python/tests` (disabled by default)."""

import pytest
from hft_client.args import parse_args
from hft_client.order import UtcStamp, body_prefix, encode_order
from hft_client.result import build_result
from hft_client.stats import ERROR_KINDS, new_histogram


@pytest.mark.benchmark(group="order")
def test_bench_encode_order(benchmark):
    stamp = UtcStamp()
    body = benchmark(lambda: (body_prefix(42, 123_456) + stamp.now() + '"}').encode())
    assert body == encode_order(42, 123_456, body[-29:-2].decode())


@pytest.mark.benchmark(group="histogram")
def test_bench_record_value(benchmark):
    hist = new_histogram()
    benchmark(hist.record_value, 123_456)
    assert hist.get_total_count() >= 1


@pytest.mark.benchmark(group="result")
def test_bench_build_result_10k_samples(benchmark):
    cfg = parse_args(["--orders", "10000"])
    hist = new_histogram()
    for i in range(10_000):
        hist.record_value(50_000 + 37 * i)
    kinds = dict.fromkeys(ERROR_KINDS, 0)

    def build():
        return build_result(
            cfg,
            started_wall_ns=0,
            duration_s=1.0,
            ok=10_000,
            error_kinds=kinds,
            latency=hist,
            uncorrected=None,
            pacing=None,
            interrupted=False,
            extra={},
        )

    assert benchmark(build)["ok"] == 10_000
