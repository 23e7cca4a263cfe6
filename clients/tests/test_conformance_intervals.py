"""client-hft's --interval-s: the .hlog cut into intervals 0.5 s apart (a soak's drift is
read from them). It asserts on the intervals' timing, so it is measuring (conftest.py) and
runs in the serial pass, unlike the rest of test_conformance_result.py."""

import pytest
from conformance import INTERVAL_CLIENTS, hlog_counts, run_client

# measuring: starts the real binaries and times them (root conftest.py)
pytestmark = [pytest.mark.measuring, pytest.mark.timeout(60)]


@pytest.mark.parametrize("interval_client", INTERVAL_CLIENTS)
def test_interval_log_has_one_line_per_interval(interval_client, server, tmp_path):
    """--interval-s (the roster's `intervals` clients: client-hft): the .hlog holds the run cut
    into intervals (a soak's drift is read from them); together they count every ok order, in
    open loop both tags."""
    from hdrh.histogram import HdrHistogram
    from hdrh.log import HistogramLogReader

    run = run_client(
        interval_client,
        tmp_path,
        "--url",
        server.url,
        "--duration",
        "2.5",
        "--rate",
        "1000",
        "--connections",
        "2",
        "--warmup",
        "50",
        "--interval-s",
        "0.5",
    )
    assert run.returncode == 0, run.stderr
    assert hlog_counts(run.hlog) == {None: run.doc["ok"], "uncorrected": run.doc["ok"]}
    reader = HistogramLogReader(str(run.hlog), HdrHistogram(1, 60_000_000_000, 3))
    starts = []
    while (hist := reader.get_next_interval_histogram()) is not None:
        if hist.get_tag() is None:
            starts.append(hist.get_start_time_stamp() / 1000)
    reader.close()
    assert len(starts) >= 5, starts  # 2.5 s in 0.5 s intervals, plus the drain
    steps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    assert all(abs(s - 0.5) < 0.01 for s in steps), steps
