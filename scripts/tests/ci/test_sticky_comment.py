"""scripts/ci/sticky-comment against the stand-in REST API (fakes/github_api.py): one comment,
created then edited in place, found among the bot's own comments only; the token reaches
GitHub in a header and never appears among curl's arguments (ps shows those to every user)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "fakes"))
from github_api import FakeGitHub, recording_curl  # noqa: E402

pytestmark = [pytest.mark.ci, pytest.mark.skipif(shutil.which("jq") is None, reason="needs jq")]

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "ci" / "sticky-comment"
TOKEN = "ghs_sticky0test0token"
BOT = "github-actions[bot]"
MARKER = "<!-- hft-bench-verdict -->"


def post(tmp_path: Path, api: FakeGitHub, body: str, token: str = TOKEN) -> subprocess.CompletedProcess:
    """sticky-comment BODY with a curl on PATH that records its arguments, then runs curl."""
    (tmp_path / "body.md").write_text(body)
    env = {
        **{
            "PATH": recording_curl(tmp_path),
            "GITHUB_TOKEN": token,
            "GITHUB_REPOSITORY": "acme/hft-bench",
        },
        **{"PR_NUMBER": "7", "GITHUB_API_URL": api.url, "BOT_LOGIN": BOT},
    }
    return subprocess.run([str(SCRIPT), str(tmp_path / "body.md")], env=env, capture_output=True, text=True)


def test_one_comment_created_then_edited_and_the_token_never_an_argument(tmp_path):
    planted = {"id": 1, "issue_number": 7, "body": f"{MARKER} not the bot's", "user": {"login": "mallory"}}
    with FakeGitHub(tmp_path / "api", token=TOKEN, login=BOT, seed={"comments": [planted]}) as api:
        first = post(tmp_path, api, f"{MARKER}\n✅ No change")
        assert first.returncode == 0 and "created the verdict comment on #7" in first.stderr, first.stderr
        second = post(tmp_path, api, f"{MARKER}\n❌ Regression")
        assert second.returncode == 0 and "updated comment" in second.stderr, second.stderr
        comments = api.state()["comments"]
    mine = [c for c in comments if c["user"]["login"] == BOT]
    assert len(mine) == 1 and mine[0]["body"].endswith("❌ Regression"), comments
    assert [c["body"] for c in comments if c["id"] == 1] == [planted["body"]], (
        "someone else's comment untouched"
    )
    argv = (tmp_path / "argv").read_text()
    assert "-K" in argv.split("\n"), "the header comes from a config on stdin"
    assert TOKEN not in argv and "Authorization" not in argv, argv
    assert TOKEN not in first.stdout + first.stderr + second.stdout + second.stderr


def test_a_token_that_cannot_go_into_a_config_line_is_refused(tmp_path):
    with FakeGitHub(tmp_path / "api", token=TOKEN, login=BOT) as api:
        r = post(tmp_path, api, f"{MARKER}\nx", token='t"\nurl = "http://elsewhere')
    assert r.returncode == 2 and "GITHUB_TOKEN is not a token" in r.stderr
    assert not (tmp_path / "argv").exists(), "refused before any request"
