"""``sp-wrappers play --web`` and ``watch --web`` (issue #35): a person plays a snapshot in a web
page, sees its move probabilities, and steps through a replay.

The JSON API is tested over plain HTTP; the page itself in a real headless Chromium driven by
chromedriver through Selenium. The snapshots are real
MaskablePPO (and untrained RecurrentPPO) policies.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from conftest import headless_chromium, needs_browser
from pettingzoo.classic import tictactoe_v3
from sb3_contrib import MaskablePPO

from sp_wrappers.archive.matches import HUMAN
from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.cli.common import make_game
from sp_wrappers.cli.play import choose_snapshot
from sp_wrappers.core.policies import SB3Policy
from sp_wrappers.envs.selfplay_env import SelfPlayEnv
from sp_wrappers.evaluation.human_play import play_session
from sp_wrappers.evaluation.policy_probabilities import action_probabilities, as_scored_policy
from sp_wrappers.evaluation.replay import play_replay
from sp_wrappers.evaluation.web_play import WebPlay, WebReplay, WebServer
from sp_wrappers.games.notation import notation_for


def make_run(root: Path, game: str, steps: int) -> Path:
    """A run directory: ``config.json`` and an archive of two tiny MaskablePPO snapshots."""
    torch.set_num_threads(1)
    root.mkdir(parents=True)
    (root / "config.json").write_text(json.dumps({"game": game, "game_kwargs": {}}))
    with SnapshotArchive(root / "archive") as archive:
        model = MaskablePPO(
            "MlpPolicy",
            SelfPlayEnv(make_game(game)),
            n_steps=32,
            batch_size=32,
            n_epochs=1,
            seed=0,
            policy_kwargs={"net_arch": [16]},
        )
        archive.save(model, step=0)
        model.learn(steps)
        archive.save(model, step=steps)
    return root


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("web")
    return {
        "tictactoe": make_run(root / "ttt", "tictactoe_v3", 128),
        "connect_four": make_run(root / "c4", "connect_four_v3", 64),
    }


def web_play(run: Path, **options: Any) -> WebPlay:
    from sp_wrappers.cli.common import resolve_run_dir, run_game

    rundir = resolve_run_dir(str(run))
    _, env_fn = run_game(rundir)
    return WebPlay(rundir.open, env_fn, choose=choose_snapshot, **options)


def archive_files(run: Path) -> dict[str, str]:
    return {
        str(p.relative_to(run)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((run / "archive").rglob("*"))
        if p.is_file()
    }


def policy_of(run: Path, snapshot: str = "snapshot-0001") -> Any:
    with SnapshotArchive(run / "archive", create=False) as archive:
        return archive.load_policy(snapshot, deterministic=True)


def expected_probabilities(policy: Any, env: Any, seat: str) -> dict[str, float]:
    """The policy's masked probabilities over ``seat``'s legal moves, named in the notation."""
    raw = env.observe(seat)
    rows = action_probabilities(
        as_scored_policy(policy, deterministic=False),
        raw["observation"][None].astype(np.float32),
        np.asarray(raw["action_mask"], dtype=bool)[None],
    )[0]
    notation = notation_for(env)
    return {notation.describe(a, env): float(rows[a]) for a in np.flatnonzero(raw["action_mask"])}


def post(url: str, body: bytes, content_type: str = "application/json", host: str | None = None):
    """``(status, json answer)`` of one POST to ``url``."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    headers = {"Content-Type": content_type}
    if host:
        headers["Host"] = host
    connection.request("POST", parts.path, body=body, headers=headers)
    response = connection.getresponse()
    answer = json.loads(response.read() or b"{}")
    connection.close()
    return response.status, answer


def send(url: str, message: dict) -> tuple[int, dict]:
    return post(url + "api", json.dumps(message).encode())


# ------------------------------------------------------------------------------------------------
# The JSON API, over plain HTTP
# ------------------------------------------------------------------------------------------------


def test_the_api_refuses_bad_json_illegal_moves_and_unknown_messages_with_400(runs):
    with WebServer(web_play(runs["tictactoe"], seat=0), port=0) as server:
        url = server.url
        status, answer = send(url, {"type": "state"})
        assert (
            status == 200 and answer["state"]["your_turn"] and answer["state"]["seat"] == "player_1"
        )
        status, answer = post(url + "api", b"{not json")
        assert status == 400 and "not JSON" in answer["error"]
        status, answer = send(url, {"type": "resign"})
        assert status == 400 and "Unknown message type 'resign'" in answer["error"]
        status, answer = post(url + "api", b"[1, 2]")
        assert status == 400 and '"type"' in answer["error"]
        status, answer = send(url, {"type": "move", "move": "10"})
        assert status == 400 and "'10' is not a move" in answer["error"]
        status, answer = send(url, {"type": "move", "move": "5"})
        assert status == 200 and answer["state"]["waiting"]
        status, answer = send(url, {"type": "move", "move": "1"})  # not the person's turn
        assert status == 400 and "wait for its reply" in answer["error"]
        status, answer = send(url, {"type": "reply"})
        assert status == 200 and answer["state"]["your_turn"]
        status, answer = send(url, {"type": "move", "move": "5"})  # taken
        assert status == 400 and "'5' is not legal now" in answer["error"]
        status, answer = send(url, {"type": "new", "snapshot": "snapshot-0042"})
        assert status == 400 and "No snapshot 'snapshot-0042'" in answer["error"]
        status, answer = send(url, {"type": "new", "deterministic": "yes"})
        assert status == 400 and "wrong type" in answer["error"]
        # only its own messages, at its own address
        assert post(url + "api", b"{}", content_type="text/plain")[0] == 415
        assert post(url + "elsewhere", b"{}")[0] == 404
        assert post(url + "api", b'{"type": "state"}', host="evil.example:80")[0] == 403
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(url + "etc/passwd", timeout=10)
        assert error.value.code == 404
        with urllib.request.urlopen(url, timeout=10) as response:
            page = response.read().decode()
            csp = response.headers["Content-Security-Policy"]
    assert "<script>" in page and "http://" not in page and "https://" not in page
    assert "default-src 'none'" in csp and "script-src 'sha256-" in csp


def test_undo_takes_back_the_persons_move_and_the_reply(runs):
    web = web_play(runs["tictactoe"], seat=0)
    web.handle({"type": "move", "move": "5"})
    first = web.handle({"type": "reply"})["state"]
    assert len(first["moves"]) == 2 and first["can_undo"]
    undone = web.handle({"type": "undo"})["state"]
    assert undone["moves"] == [] and undone["your_turn"] and not undone["can_undo"]
    with pytest.raises(ValueError, match="Nothing to undo"):
        web.handle({"type": "undo"})
    web.handle({"type": "move", "move": "5"})
    assert web.handle({"type": "reply"})["state"]["moves"] == first["moves"]  # deterministic


def test_the_probabilities_and_value_are_the_policys_on_that_position(runs):
    web = web_play(runs["tictactoe"], seat=0)
    policy = policy_of(runs["tictactoe"])
    env = tictactoe_v3.env()
    env.reset()
    state = web.handle({"type": "state"})["state"]
    shown = {m["move"]: m["p"] for m in state["analysis"]["moves"]}  # its view of your seat
    assert shown == pytest.approx(expected_probabilities(policy, env, "player_1"), abs=1e-6)
    assert sum(shown.values()) == pytest.approx(1.0, abs=1e-5)
    board = {c["move"]: c["p"] for row in state["board"]["cells"] for c in row}
    assert board == pytest.approx(shown, abs=1e-6)  # the heat map
    state = web.handle({"type": "move", "move": "1"})["state"]
    env.step(0)
    expected = expected_probabilities(policy, env, "player_2")
    assert {m["move"]: m["p"] for m in state["analysis"]["moves"]} == pytest.approx(
        expected, abs=1e-6
    )
    observation = torch.as_tensor(env.observe("player_2")["observation"][None], dtype=torch.float32)
    with torch.no_grad():
        value = float(policy.policy.predict_values(observation)[0, 0])
    assert state["analysis"]["value"] == pytest.approx(value, abs=1e-3)
    reply = web.handle({"type": "reply"})["state"]["last_reply"]
    assert reply["chosen"] == max(expected, key=expected.get)  # deterministic: the most likely


def test_record_stores_a_finished_game_as_the_terminal_does_and_nothing_else(runs, tmp_path):
    run = tmp_path / "copy"
    shutil.copytree(runs["tictactoe"], run)
    before = archive_files(run)
    web = web_play(run, seat=0)  # not recording
    play_to_the_end(web)
    assert archive_files(run) == before
    web = web_play(run, seat="X", record=True)
    state = play_to_the_end(web)
    assert "Recorded the game" in state["recorded"] and not state["can_undo"]
    assert web.handle({"type": "state"})["state"]["recorded"]  # recorded once
    with SnapshotArchive(run / "archive", create=False) as archive:
        matches = archive.matches()
    assert len(matches) == 1
    row = matches[0]
    assert (row.player_a, row.player_b, row.seat_a, row.source) == (
        HUMAN,
        "snapshot-0001",
        "player_1",
        "play",
    )
    assert row.score_a == web.game.outcome.score


def play_to_the_end(web: WebPlay) -> dict:
    state = web.handle({"type": "state"})["state"]
    while not state["over"]:
        if state["waiting"]:
            state = web.handle({"type": "reply"})["state"]
        else:
            state = web.handle({"type": "move", "move": state["legal"][0]})["state"]
    return state


def test_a_recurrent_policy_keeps_its_state_through_the_game_and_through_undo(tmp_path):
    sb3_contrib = pytest.importorskip("sb3_contrib")
    model = sb3_contrib.RecurrentPPO(
        "MlpLstmPolicy",
        SelfPlayEnv(tictactoe_v3.env()),
        n_steps=32,
        batch_size=32,
        seed=0,
        policy_kwargs={"lstm_hidden_size": 16},
    )
    with torch.no_grad():
        model.policy.lstm_actor.weight_hh_l0.mul_(4.0)  # its memory weighs on its moves
    lstm = SB3Policy(model, deterministic=True, policy_id="lstm")
    web = WebPlay(lambda: SnapshotArchive(tmp_path), tictactoe_v3.env, policy=lstm, seat=1, seed=0)
    state = play_to_the_end(web)
    human = "".join(
        f"{move}\n"
        for seat, move in ((m["seat"], m["move"]) for m in state["moves"])
        if seat == "player_2"
    )
    import io

    reference = play_session(
        tictactoe_v3.env,
        lstm,
        1,
        input_stream=io.StringIO(human),
        output_stream=io.StringIO(),
        seed=0,
    )
    assert [(m["seat"], m["move"]) for m in state["moves"]] == reference.moves
    assert "recurrent" in state["analysis_note"]
    # undo replays the game: the policy's memory is rebuilt, so the same moves follow again
    web = WebPlay(lambda: SnapshotArchive(tmp_path), tictactoe_v3.env, policy=lstm, seat=1, seed=0)
    for seat, move in reference.moves[:4]:
        web.handle({"type": "reply"} if seat == "player_1" else {"type": "move", "move": move})
    web.handle({"type": "undo"})
    for seat, move in reference.moves[3:6]:
        web.handle({"type": "reply"} if seat == "player_1" else {"type": "move", "move": move})
    assert web.game.outcome.moves == reference.moves[:6]


def test_a_replay_steps_through_with_each_players_probabilities(runs):
    policy = policy_of(runs["tictactoe"])
    replay = play_replay(
        tictactoe_v3.env,
        policy,
        policy_of(runs["tictactoe"], "snapshot-0000"),
        record_frames=False,
        seed=0,
    )
    policies = {"player_1": policy, "player_2": policy_of(runs["tictactoe"], "snapshot-0000")}
    web = WebReplay(tictactoe_v3.env, replay, policies)
    env = tictactoe_v3.env()
    env.reset(seed=0)
    for ply, move in enumerate(replay.moves):
        state = web.handle({"type": "goto", "ply": ply})["state"]
        seat, action = next(iter(move.actions.items()))
        shown = {m["move"]: m["p"] for m in state["analysis"]["moves"]}
        assert shown == pytest.approx(expected_probabilities(policies[seat], env, seat), abs=1e-6)
        assert state["chosen"] == move.move
        env.step(action)
    last = web.handle({"type": "goto", "ply": 99})["state"]
    assert last["ply"] == len(replay.moves) and last["result"] == replay.result
    assert web.handle({"type": "goto", "ply": -3})["state"]["ply"] == 0
    with pytest.raises(ValueError, match="goto needs an integer"):
        web.handle({"type": "goto", "ply": "2"})


def test_play_web_serves_until_ctrl_c_prints_its_url_and_writes_nothing(
    runs, tmp_path, popen_interruptible
):
    run = tmp_path / "copy"
    shutil.copytree(runs["tictactoe"], run)
    before = archive_files(run)
    command = [
        sys.executable,
        "-m",
        "sp_wrappers.cli",
        "play",
        str(run),
        "--web",
        "--port",
        "0",
        "--seat",
        "0",
    ]
    process = popen_interruptible(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        line = process.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)
        assert not url.endswith(":0/")
        status, answer = send(url, {"type": "move", "move": "5"})
        assert status == 200 and answer["state"]["moves"][0]["move"] == "5"
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 130, err  # Ctrl-C, after a move as before one
    assert "Traceback" not in err and "Stopped. Nothing was written" in out
    assert archive_files(run) == before


def test_watch_web_serves_the_match_to_step_through_until_ctrl_c(runs, popen_interruptible):
    command = [sys.executable, "-m", "sp_wrappers.cli", "watch", str(runs["tictactoe"]), "--web"]
    command += ["--port", "0", "--a", "latest", "--b", "snapshot-0000", "--deterministic"]
    process = popen_interruptible(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        line = process.stdout.readline()
        assert "snapshot-0001 (as player_1) vs snapshot-0000 (as player_2)" in line, line
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)
        status, answer = send(url, {"type": "goto", "ply": 1})
        assert status == 200 and answer["state"]["ply"] == 1
        assert answer["state"]["analysis"]["seat"] == "player_2"
        assert sum(m["p"] for m in answer["state"]["analysis"]["moves"]) == pytest.approx(1, 1e-4)
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 130 and "Traceback" not in err, err  # Ctrl-C's status
    assert "Stopped." in out


def test_watch_web_refuses_out_and_a_taken_port(runs, sp_wrappers):
    status, _, err = sp_wrappers("watch", runs["tictactoe"], "--web", "--out", "x.gif")
    assert status == 2 and "drop --out" in err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        status, _, err = sp_wrappers("play", runs["tictactoe"], "--web", "--port", port)
    assert status == 2 and "pass another --port" in err


# ------------------------------------------------------------------------------------------------
# In a real browser: headless Chromium through chromedriver's WebDriver protocol
# ------------------------------------------------------------------------------------------------


class Browser:
    """The page helpers these tests use, over Selenium's Chrome driver."""

    def __init__(self, profile: Path) -> None:
        self.driver = headless_chromium(profile)

    def open(self, url: str) -> None:
        self.driver.get(url)

    def run(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def click(self, css: str) -> None:
        from selenium.webdriver.common.by import By

        self.driver.find_element(By.CSS_SELECTOR, css).click()

    def text(self, css: str) -> str:
        return self.run(f"return document.querySelector({css!r}).textContent;")

    def wait(self, script: str, timeout: float = 30.0) -> Any:
        from selenium.webdriver.support.ui import WebDriverWait

        waiting = WebDriverWait(self.driver, timeout, poll_frequency=0.05)
        return waiting.until(lambda driver: driver.execute_script(script), f"waiting for {script}")

    def screenshot(self) -> bytes:
        return self.driver.get_screenshot_as_png()

    def close(self) -> None:
        self.driver.quit()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    browser = Browser(tmp_path_factory.mktemp("chromium"))
    yield browser
    browser.close()


SHOWN = "return Object.fromEntries(Array.from(document.querySelectorAll('{table} tr'), "
SHOWN += "r => [r.dataset.move, Number(r.dataset.p)]));"
N_MOVES = "return document.getElementById('moves').textContent.split(' ').length - 1;"


@needs_browser
def test_in_the_browser_click_see_the_reply_refuse_an_illegal_click_and_record_the_game(
    runs, browser, tmp_path
):
    run = tmp_path / "copy"
    shutil.copytree(runs["tictactoe"], run)
    policy = policy_of(run)
    env = tictactoe_v3.env()
    env.reset()
    with WebServer(web_play(run, seat=0, record=True), port=0) as server:
        browser.open(server.url)
        browser.wait("return document.getElementById('status').textContent === 'Your move.';")
        shown = browser.run(SHOWN.format(table="#analysis"))  # its view of your first move
        assert shown == pytest.approx(expected_probabilities(policy, env, "player_1"), abs=1e-5)
        browser.click("#board td[data-move='5']")
        browser.wait(N_MOVES.replace("return ", "return 2 === "))  # your move and its reply
        browser.wait("return document.getElementById('status').textContent === 'Your move.';")
        env.step(4)
        reply = browser.run(SHOWN.format(table="#lastreply"))  # what it played from
        assert reply == pytest.approx(expected_probabilities(policy, env, "player_2"), abs=1e-5)
        chosen = browser.text("#lastreply tr.chosen td")
        assert chosen == max(reply, key=reply.get)
        # an illegal click: cell 5 is taken; nothing is sent, a message says why
        browser.click("#board td[data-row='1'][data-col='1']")
        assert "Cell 5 is taken." in browser.text("#message")
        assert browser.run(N_MOVES) == 2
        # play on to the end, always the first legal cell
        while "Game over" not in browser.text("#status"):
            count = browser.run(N_MOVES)
            browser.click("#board td.legal")
            browser.wait(
                "const s = document.getElementById('status').textContent;"
                "return s.startsWith('Game over') || "
                f"(s === 'Your move.' && {N_MOVES[7:-1]} > {count});"
            )
        assert "Recorded the game" in browser.text("#message")
        result = browser.text("#status")
    with SnapshotArchive(run / "archive", create=False) as archive:
        rows = archive.matches()
    assert len(rows) == 1 and (rows[0].player_a, rows[0].player_b) == (HUMAN, "snapshot-0001")
    assert (rows[0].source, rows[0].seat_a) == ("play", "player_1")
    verdict = {1.0: "You win.", 0.5: "Draw.", 0.0: "snapshot-0001 wins."}[rows[0].score_a]
    assert result == f"Game over. {verdict}"


@needs_browser
def test_in_the_browser_a_connect_four_position_with_its_heat_map(runs, browser, tmp_path):
    with WebServer(web_play(runs["connect_four"], seat=0), port=0) as server:
        browser.open(server.url)
        browser.wait("return document.getElementById('status').textContent === 'Your move.';")
        for column in ("4", "4", "3"):
            count = browser.run(N_MOVES)
            browser.click(f"#board td[data-move='{column}']")
            browser.wait(N_MOVES.replace("return ", f"return {count + 2} <= "))
            browser.wait("return document.getElementById('status').textContent === 'Your move.';")
        heat = browser.run("return document.querySelectorAll('#board td .p').length;")
        assert heat == 7  # a probability on each column's landing cell
        shot = browser.screenshot()
        browser.click("#undo")  # takes back your 3 and its reply
        browser.wait(N_MOVES.replace("return ", "return 4 === "))
        assert browser.text("#moves").startswith("Moves: 4 ")
        browser.click("#new")
        browser.wait("return document.getElementById('moves').textContent === '';")
        assert browser.text("#status") == "Your move."
    path = tmp_path / "connect_four.png"
    path.write_bytes(shot)
    from PIL import Image

    with Image.open(path) as image:
        assert image.width >= 600 and image.height >= 400


@needs_browser
def test_in_the_browser_watch_steps_through_a_replay(runs, browser):
    policy = policy_of(runs["tictactoe"])
    replay = play_replay(tictactoe_v3.env, policy, policy, record_frames=False, seed=0)
    web = WebReplay(tictactoe_v3.env, replay, {s: policy for s in replay.players})
    with WebServer(web, port=0) as server:
        browser.open(server.url)
        browser.wait(
            "return document.getElementById('ply').textContent === 'position 0 of "
            f"{len(replay.moves)}';"
        )
        browser.click("#forward")
        browser.wait("return document.getElementById('ply').textContent.startsWith('position 1');")
        env = tictactoe_v3.env()
        env.reset(seed=0)
        env.step(next(iter(replay.moves[0].actions.values())))
        shown = browser.run(SHOWN.format(table="#analysis"))
        assert shown == pytest.approx(expected_probabilities(policy, env, "player_2"), abs=1e-5)
        browser.click("#last")
        browser.wait("return document.getElementById('status').textContent.startsWith('Result');")
        browser.click("#first")
        browser.wait("return document.getElementById('ply').textContent.startsWith('position 0');")


@needs_browser
def test_in_the_browser_chess_go_and_a_framed_game_are_played_by_clicks(browser, tmp_path):
    from pettingzoo.classic import chess_v6, go_v5, texas_holdem_v4

    from sp_wrappers.core.policies import RandomPolicy

    def serve(env_fn: Any) -> WebServer:
        app = WebPlay(
            lambda: SnapshotArchive(tmp_path), env_fn, policy=RandomPolicy(), seat=0, seed=0
        )
        return WebServer(app, port=0)

    your_move = "return document.getElementById('status').textContent === 'Your move.';"
    with serve(chess_v6.env) as server:
        browser.open(server.url)
        browser.wait(your_move)
        browser.click("#board td[data-square='e2']")
        browser.click("#board td[data-square='e5']")  # a pawn goes one or two squares
        assert "e2 to e5 is not a legal move." in browser.text("#message")
        browser.click("#board td[data-square='e4']")
        browser.wait(N_MOVES.replace("return ", "return 2 === "))
        assert browser.text("#moves").startswith("Moves: e2e4 ")
        assert browser.text("#board td[data-square='e4']").startswith("♙")
        browser.click("#board td[data-square='d4']")  # empty
        assert "No legal move of yours starts on d4." in browser.text("#message")
        (tmp_path / "chess.png").write_bytes(browser.screenshot())
    with serve(lambda: go_v5.env(board_size=5)) as server:
        browser.open(server.url)
        browser.wait(your_move)
        browser.click("#board td[data-move='C3']")
        browser.wait(N_MOVES.replace("return ", "return 2 === "))
        browser.wait(your_move)
        assert browser.text("#board td[data-row='2'][data-col='2']") == "X"
        browser.click("#legal button[data-move='pass']")
        browser.wait(N_MOVES.replace("return ", "return 4 <= "))
    with serve(lambda: texas_holdem_v4.env(render_mode="rgb_array")) as server:
        browser.open(server.url)
        browser.wait(
            "const s = document.getElementById('status').textContent;"
            "return s === 'Your move.' || s.startsWith('Game over');"
        )
        hands = browser.text("#boardtext")  # your hand only, until the end
        assert "Your hand:" in hands and "player_1 hand" not in hands
        if browser.text("#status") == "Your move.":
            assert browser.run("return document.querySelectorAll('#legal button').length;") >= 2
            browser.click("#legal button[data-move='fold']")
            browser.wait("return document.getElementById('status').textContent.startsWith('Game');")
        assert "player_1 hand" in browser.text("#boardtext")  # shown at the end


def test_a_game_without_a_drawn_board_shows_its_own_frame_and_its_legal_moves(tmp_path):
    import base64
    import io

    from pettingzoo.classic import leduc_holdem_v4
    from PIL import Image

    from sp_wrappers.core.policies import RandomPolicy

    def own_game() -> Any:  # a game of one's own that hides nothing: no notation, no text board
        env = leduc_holdem_v4.env(render_mode="rgb_array")
        env.metadata = {**env.metadata, "name": "my_cards_v0", "hidden_information": False}
        return env

    web = WebPlay(
        lambda: SnapshotArchive(tmp_path), own_game, policy=RandomPolicy(), seat=0, seed=0
    )
    state = web.handle({"type": "state"})["state"]
    if state["waiting"]:
        state = web.handle({"type": "reply"})["state"]
    board = state["board"]
    assert board["kind"] == "frame" and board["image"].startswith("data:image/png;base64,")
    with Image.open(io.BytesIO(base64.b64decode(board["image"].split(",", 1)[1]))) as image:
        assert image.width > 100 and image.height > 100
    assert state["legal"] and all(move.isdigit() for move in state["legal"])
    state = web.handle({"type": "move", "move": state["legal"][0]})["state"]
    assert state["moves"][0]["seat"] == "player_0"
