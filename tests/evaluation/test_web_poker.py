"""Playing a bot at games where the players see different things (issue #42): hold'em, Leduc
hold'em, and OpenSpiel's Kuhn and Leduc poker, in the terminal, through the page's JSON API over
HTTP and in a real headless browser.

Nothing the bot computes from its own cards (its move probabilities, its value estimate) reaches
the person before the game is over, and no picture that draws every hand; the person's own
analysis stays. The bot samples its moves by default in these games, and says so. The snapshots
are real MaskablePPO policies (actor-critic: they have a value estimate to leak).
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from conftest import needs_browser
from pettingzoo.classic import leduc_holdem_v4
from test_web_play import (
    Browser,
    archive_files,
    expected_probabilities,
    make_run,
    policy_of,
    send,
    web_play,
)

from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.cli.play import play_run
from sp_wrappers.core.policies import RandomPolicy
from sp_wrappers.evaluation.web_play import WebPlay, WebServer

KUHN = "sp_wrappers.games.openspiel_games:kuhn_poker"
LEDUC = "sp_wrappers.games.openspiel_games:leduc_poker"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("poker")
    return {
        "holdem": make_run(root / "holdem", "texas_holdem_v4", 64),
        "kuhn": make_run(root / "kuhn", KUHN, 64),
        "leduc": make_run(root / "leduc", LEDUC, 64),
        "tictactoe": make_run(root / "ttt", "tictactoe_v3", 32),
    }


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    browser = Browser(tmp_path_factory.mktemp("chromium"))
    yield browser
    browser.close()


def bot_view(policy: Any, env: Any, seat: str) -> list[str]:
    """The numbers the bot computes from its own observation at its turn, as the page would
    print them: its probabilities (6 decimals) and its value estimate (4 decimals)."""
    shown = [f"{p:.6f}".rstrip("0") for p in expected_probabilities(policy, env, seat).values()]
    observation = torch.as_tensor(env.observe(seat)["observation"][None], dtype=torch.float32)
    with torch.no_grad():
        value = float(policy.policy.predict_values(observation)[0, 0])
    return shown + [str(round(value, 4))]


def passive(legal: list[str]) -> str:
    """A move that keeps the hand going (check, call), else the first legal one."""
    return next((m for m in ("check", "call", "pass") if m in legal), legal[0])


# ------------------------------------------------------------------------------------------------
# Item 1: the bot's own view stays off the page and out of the API until the hand is over
# ------------------------------------------------------------------------------------------------


def test_holdem_through_the_api_shows_your_analysis_but_never_the_bots_until_the_end(runs):
    policy = policy_of(runs["holdem"])
    replies_mid_hand = 0
    for seed in range(12):
        web = web_play(runs["holdem"], seat=1, seed=seed, deterministic=True)
        with WebServer(web, port=0) as server:
            status, answer = send(server.url, {"type": "state"})
            state = answer["state"]
            while not state["over"]:
                env = web.game.env
                if state["waiting"]:  # its turn: what it thinks comes from its cards
                    assert state["analysis"] is None
                    private = bot_view(policy, env, state["to_move"])
                    status, answer = send(server.url, {"type": "reply"})
                    text, state = json.dumps(answer), answer["state"]
                    assert status == 200
                    if not state["over"]:
                        replies_mid_hand += 1
                        reply = state["last_reply"]
                        assert reply["moves"] == [] and reply["value"] is None and reply["chosen"]
                        assert not [number for number in private if number in text], text
                        assert state["hidden_information"] and state["hidden_note"]
                else:  # your turn: its view of your seat, from your own cards, stays
                    mine = {m["move"]: m["p"] for m in state["analysis"]["moves"]}
                    assert state["analysis"]["seat"] == "player_1"  # yours
                    assert state["analysis"]["value"] is not None
                    expected = expected_probabilities(policy, env, "player_1")
                    assert mine == pytest.approx(expected, abs=1e-5)
                    move = passive(state["legal"])
                    state = send(server.url, {"type": "move", "move": move})[1]["state"]
            assert state["hidden_note"] == "" and "player_0 hand" in state["board"]["text"]
            # the same deal again would show its cards: no undo in a game with hidden information
            assert not state["can_undo"]
            status, answer = send(server.url, {"type": "undo"})
            assert status == 400 and "cannot be taken back" in answer["error"]
            if state["moves"][-1]["seat"] == "player_0":  # it moved last: now its view is shown
                assert state["last_reply"]["moves"] and state["last_reply"]["value"] is not None
        if replies_mid_hand >= 2:
            break
    assert replies_mid_hand >= 2  # the bot answered mid-hand, where its view was private


def test_leduc_holdem_shows_your_hand_as_text_instead_of_its_picture_of_every_hand(tmp_path):
    web = WebPlay(
        lambda: SnapshotArchive(tmp_path),
        lambda: leduc_holdem_v4.env(render_mode="rgb_array"),
        policy=RandomPolicy(),
        seat=0,
        seed=0,
    )
    state = web.handle({"type": "state"})["state"]
    while not state["over"]:
        board = state["board"]
        assert board["image"] is None  # the picture draws both hands
        assert "Your hand:" in board["text"] and "player_1 hand" not in board["text"]
        if state["waiting"]:
            state = web.handle({"type": "reply"})["state"]
        else:
            assert state["legal"] and "fold" in state["legal"]
            state = web.handle({"type": "move", "move": passive(state["legal"])})["state"]
    assert "player_0 hand" in state["board"]["text"] and "player_1 hand" in state["board"]["text"]


def own_card_game(hidden: bool) -> Any:
    """A card game of a user's own, with no text board: Leduc hold'em's rules and picture under
    another name, saying whether its players see different things."""
    env = leduc_holdem_v4.env(render_mode="rgb_array")
    env.metadata = {**env.metadata, "name": "my_cards_v0", "hidden_information": hidden}
    return env


def test_a_game_without_a_text_board_shows_its_picture_at_the_end_when_it_hides_hands(tmp_path):
    def play(hidden: bool) -> list[dict]:
        web = WebPlay(
            lambda: SnapshotArchive(tmp_path),
            lambda: own_card_game(hidden),
            policy=RandomPolicy(),
            seat=0,
            seed=0,
        )
        states = [web.handle({"type": "state"})["state"]]
        while not states[-1]["over"]:
            state = states[-1]
            if state["waiting"]:
                states.append(web.handle({"type": "reply"})["state"])
            else:
                states.append(web.handle({"type": "move", "move": state["legal"][0]})["state"])
        return states

    hidden = play(True)
    assert all(s["board"]["image"] is None and s["board"]["note"] for s in hidden[:-1])
    assert hidden[-1]["board"]["image"] and not hidden[-1]["board"]["note"]
    assert all(move.isdigit() for move in hidden[0]["legal"])  # moves by index: no notation
    shown = play(False)  # a game that hides nothing draws its picture all along
    assert all(s["board"]["image"] for s in shown) and shown[0]["board"]["text"] == ""


# ------------------------------------------------------------------------------------------------
# Item 2: sampling is the default where equilibria are mixed, and the page says which it does
# ------------------------------------------------------------------------------------------------


def test_the_bot_samples_by_default_in_poker_and_plays_its_most_likely_move_in_board_games(runs):
    holdem = web_play(runs["holdem"], seat=0, seed=0).handle({"type": "state"})["state"]
    assert holdem["deterministic"] is False
    assert (
        "samples its moves" in holdem["mode_note"] and "hidden information" in holdem["mode_note"]
    )
    board = web_play(runs["tictactoe"], seat=0).handle({"type": "state"})["state"]
    assert board["deterministic"] is True and "most likely move" in board["mode_note"]
    chosen = web_play(runs["holdem"], seat=0, deterministic=True)
    state = chosen.handle({"type": "state"})["state"]
    assert state["deterministic"] is True and "as chosen" in state["mode_note"]
    state = chosen.handle({"type": "new", "deterministic": False})["state"]
    assert state["deterministic"] is False
    # and in the terminal, which says so on its first line
    out = io.StringIO()
    play_run(str(runs["kuhn"]), seat=0, seed=0, input_stream=io.StringIO(""), output_stream=out)
    assert "(sampling its moves)" in out.getvalue().splitlines()[0]
    out = io.StringIO()
    play_run(
        str(runs["kuhn"]),
        seat=0,
        seed=0,
        deterministic=True,
        input_stream=io.StringIO(""),
        output_stream=out,
    )
    assert "(deterministic" in out.getvalue().splitlines()[0]


# ------------------------------------------------------------------------------------------------
# Item 3: Kuhn and Leduc poker (OpenSpiel, through Shimmy) are playable, cards to their owner
# ------------------------------------------------------------------------------------------------


def test_kuhn_poker_in_the_terminal_shows_your_card_and_the_bots_only_at_the_end(runs):
    before = archive_files(runs["kuhn"])
    for seed in range(4):
        out = io.StringIO()
        moves = io.StringIO("bet\nbet\nbet\n")
        outcome = play_run(
            str(runs["kuhn"]), seat=0, seed=seed, input_stream=moves, output_stream=out
        )
        text = out.getvalue()
        during, _, after = text.partition("Game over.")
        assert outcome.finished, text
        assert "Your card:" in during and "player_1 card" not in during
        assert "Legal moves: pass, bet" in during
        assert "player_0 card" in after and "player_1 card" in after
        assert outcome.moves[0] == ("player_0", "bet")
    assert archive_files(runs["kuhn"]) == before  # not recording: nothing written


def test_leduc_poker_through_the_api_refuses_an_illegal_move_and_records_a_finished_game(runs):
    import shutil

    run = runs["leduc"].parent / "leduc-recorded"
    shutil.copytree(runs["leduc"], run)
    web = web_play(run, seat=0, seed=1, record=True)
    with WebServer(web, port=0) as server:
        state = send(server.url, {"type": "state"})[1]["state"]
        assert state["legal"] == ["call", "raise"] and state["your_turn"]
        status, answer = send(server.url, {"type": "move", "move": "fold"})  # nothing to fold to
        assert status == 400 and "not legal now" in answer["error"]
        while not state["over"]:
            assert "Your card:" in state["board"]["text"]
            assert "player_1 card" not in state["board"]["text"]
            if state["waiting"]:
                state = send(server.url, {"type": "reply"})[1]["state"]
            else:
                move = passive(state["legal"])
                state = send(server.url, {"type": "move", "move": move})[1]["state"]
        assert (
            "player_1 card" in state["board"]["text"] and "Recorded the game" in state["recorded"]
        )
    with SnapshotArchive(run / "archive", create=False) as archive:
        rows = archive.matches()
    assert len(rows) == 1 and (rows[0].player_a, rows[0].seat_a) == ("human", "player_0")


# ------------------------------------------------------------------------------------------------
# In a real browser
# ------------------------------------------------------------------------------------------------

STATUS = "return document.getElementById('status').textContent;"
YOUR_MOVE_OR_OVER = (
    "const s = document.getElementById('status').textContent;"
    "return s === 'Your move.' || s.startsWith('Game over');"
)
N_MOVES = "return document.getElementById('moves').textContent.split(' ').length - 1;"


def click_through(browser: Browser, check: Any) -> None:
    """Play passive moves by the buttons until the game is over, calling ``check`` at each of
    the person's turns (after the bot's reply)."""
    while not browser.run(STATUS).startswith("Game over"):
        check()
        count = browser.run(N_MOVES)
        buttons = browser.run(
            "return Array.from(document.querySelectorAll('#legal button'), b => b.dataset.move);"
        )
        browser.click(f"#legal button[data-move='{passive(buttons)}']")
        browser.wait(
            "const s = document.getElementById('status').textContent;"
            "return s.startsWith('Game over') || "
            f"(s === 'Your move.' && {N_MOVES[7:-1]} > {count});"
        )


@needs_browser
def test_in_the_browser_holdem_shows_your_analysis_but_not_the_bots_until_the_end(runs, browser):
    checked: list[str] = []
    for seed in range(12):
        web = web_play(runs["holdem"], seat=1, seed=seed, deterministic=False)

        def check() -> None:
            assert browser.run("return document.querySelectorAll('#analysis tr').length;") >= 2
            side = browser.text("#side")
            last = browser.text("#lastreply")
            if last:  # it has moved: the move, and nothing of why
                assert last.startswith("It played ") and "%" not in last
                assert browser.run("return document.querySelectorAll('#lastreply tr').length;") == 0
                assert "Value estimate for player_0" not in side
                assert "shown when the game is over" in browser.text("#hiddennote")
                checked.append(last)

        with WebServer(web, port=0) as server:
            browser.open(server.url)
            browser.wait(YOUR_MOVE_OR_OVER)
            if browser.run(STATUS) == "Your move.":
                assert "player_0 hand" not in browser.text("#boardtext")
            click_through(browser, check)
            assert "samples its moves" in browser.text("#mode")
            assert browser.text("#hiddennote") == ""
            assert "player_0 hand" in browser.text("#boardtext")
        if checked:
            return
    pytest.fail("the bot never moved before the end of a hand in 12 deals")


@needs_browser
def test_in_the_browser_a_picture_that_draws_every_hand_waits_for_the_end(browser, tmp_path):
    leduc = (lambda: leduc_holdem_v4.env(render_mode="rgb_array"), True)
    own = (lambda: own_card_game(True), False)  # no text board: its picture, at the end
    for env_fn, text_board in (leduc, own):
        app = WebPlay(
            lambda: SnapshotArchive(tmp_path), env_fn, policy=RandomPolicy(), seat=0, seed=0
        )
        with WebServer(app, port=0) as server:
            browser.open(server.url)
            browser.wait(YOUR_MOVE_OR_OVER)

            def check(text_board: bool = text_board) -> None:
                hidden = "return document.getElementById('frame').classList.contains('hidden');"
                assert browser.run(hidden)
                if text_board:
                    assert "Your hand:" in browser.text("#boardtext")
                    assert "player_1 hand" not in browser.text("#boardtext")
                else:
                    assert "shown when the game is over" in browser.text("#boardnote")

            click_through(browser, check)
            if text_board:
                assert "player_1 hand" in browser.text("#boardtext")
            else:
                browser.wait(
                    "return !document.getElementById('frame').classList.contains('hidden');"
                )


@needs_browser
def test_in_the_browser_kuhn_poker_is_played_by_its_buttons_with_your_card_only(runs, browser):
    web = web_play(runs["kuhn"], seat=0, seed=2)
    with WebServer(web, port=0) as server:
        browser.open(server.url)
        browser.wait(YOUR_MOVE_OR_OVER)
        assert browser.run(
            "return Array.from(document.querySelectorAll('#legal button'), b => b.dataset.move);"
        ) == ["pass", "bet"]

        def check() -> None:
            board = browser.text("#boardtext")
            assert "Your card:" in board and "player_1 card" not in board

        click_through(browser, check)
        assert "player_1 card" in browser.text("#boardtext")
        assert re.match(r"Game over\. (You win|snapshot-0001 wins)\.", browser.text("#status"))


# ------------------------------------------------------------------------------------------------
# Item 4: Ctrl-C reaches a command however the suite was started
# ------------------------------------------------------------------------------------------------


def test_a_command_started_from_a_process_that_ignores_sigint_still_stops_on_ctrl_c(
    runs, popen_interruptible
):
    command = [sys.executable, "-m", "sp_wrappers.cli", "play", str(runs["tictactoe"])]
    command += ["--web", "--port", "0", "--seat", "0"]
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as under nohup or `cmd &`
    try:
        process = popen_interruptible(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        line = process.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)
        assert send(url, {"type": "state"})[0] == 200
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130 and "Traceback" not in err, err
    assert "Stopped." in out and np.isfinite(process.returncode)
