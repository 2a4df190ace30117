"""A run report: one self-contained HTML page that says how a self-play run went.

Every kind of run ends by writing its page (a page that cannot be written is a note, never a
failed run); ``sp-wrappers report`` rewrites it.

The page has the run's configuration (``config.json``), the learner's online Elo at each snapshot
against its training step, Bradley-Terry ratings with 95% intervals over the whole match history
(:func:`~sp_wrappers.ratings.archive_ratings.archive_ratings`), the payoff matrix
(:func:`~sp_wrappers.evaluation.plots.plot_payoff`), the strength against the reference players
(``ratings.json``'s evaluation games and each snapshot's record against the baselines), the
learner's one-move tactics at each strength evaluation (``strength.json``), the
exact exploitability curve where the run measured it (``exploitability.json``), the archive's
size and a replay of the latest snapshot against the best earlier one
(:mod:`sp_wrappers.evaluation.replay`, an animated GIF).

Everything is inside the one file: images are base64 ``data:`` URIs, the style sheet is inline,
there is no script, and a Content-Security-Policy allows nothing but inline styles and ``data:``
images, so the page never reaches the network when it is opened. A part that cannot be drawn
(matplotlib or imageio missing, no games yet, a game without ``rgb_array`` frames) is replaced by
a note saying why and what to install.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import os
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core.run_layout import ARCHIVE_DIR, PSRO_NAME, REPORT_NAME
from ..core.save_util import atomic_write
from ..core.state_file import StateFileError
from .ratings_file import RATINGS_FORMAT
from .rundir import RunArchive, RunDir, RunDirError, run_trusted_modules

__all__ = ["write_report", "report_at_end", "REPORT_NAME", "SUPPORT_THRESHOLD", "support_text"]

#: The least meta-weight a PSRO member is listed by name with; lighter members fold into a line.
SUPPORT_THRESHOLD = 0.01


def support_text(weights: dict[str, float], threshold: float = SUPPORT_THRESHOLD) -> str:
    """A meta-mixture's support as the report lists it: the members of weight ``threshold`` or
    more, heaviest first, and the rest (of positive weight) folded into one count.

    :param weights: member id -> meta-weight.
    :param threshold: the least weight listed by name.

    >>> support_text({"a": 0.6, "b": 0.37, "c": 0.01, "d": 0.01, "e": 0.01, "f": 0.0})
    'a=0.600 b=0.370 c=0.010 d=0.010 e=0.010'
    >>> support_text({"a": 0.9, **{f"m{i}": 0.004 for i in range(25)}})
    'a=0.900 and 25 members below 0.01 (0.100 in all)'
    """
    shown = sorted(((-w, m) for m, w in weights.items() if w >= threshold))
    folded = [w for w in weights.values() if 1e-6 < w < threshold]
    text = " ".join(f"{m}={-w:.3f}" for w, m in shown)
    if folded:
        rest = f"{len(folded)} members below {threshold:g} ({sum(folded):.3f} in all)"
        text = f"{text} and {rest}" if text else rest
    return text


_CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d1f24;
background:#f4f5f7}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:26px;margin:0 0 4px}h2{font-size:19px;margin:0 0 12px}
section{background:#fff;border-radius:8px;padding:18px 22px;margin:18px 0;
box-shadow:0 1px 3px rgba(0,0,0,.08)}
.sub{color:#5b6070;margin:0}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin-top:16px}
.card{background:#fff;border-radius:8px;padding:10px 16px;box-shadow:0 1px 3px rgba(0,0,0,.08)}
.card b{display:block;font-size:20px}.card span{color:#5b6070;font-size:13px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{padding:4px 10px;border-bottom:1px solid #e3e5ea;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#f0f1f4}
img{max-width:100%;height:auto;display:block;margin:8px 0}
pre{background:#f0f1f4;padding:12px;border-radius:6px;overflow:auto;font-size:12px;
white-space:pre-wrap;word-break:break-all}
summary{cursor:pointer;color:#3b4a7a;margin:6px 0}
.note{color:#8a5a00;background:#fff6e0;padding:8px 12px;border-radius:6px}
footer{color:#80859a;font-size:12px;text-align:center;padding:12px}
"""
_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _note(text: str) -> str:
    return f'<p class="note">{_e(text)}</p>'


def _no_plot(error: ImportError) -> str:
    """The note standing in for a figure when matplotlib is missing."""
    from ..evaluation.plots import PLOTS_HINT

    text = str(error)
    return _note(text if PLOTS_HINT in text else f"Not drawn: {text}; {PLOTS_HINT}")


def _image(data: bytes, mime: str, alt: str) -> str:
    encoded = base64.b64encode(data).decode("ascii")
    return f'<img src="data:{mime};base64,{encoded}" alt="{_e(alt)}">'


def _table(header: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    thead = f"<thead><tr>{head}</tr></thead>" if any(header) else ""
    return f"<table>{thead}<tbody>{body}</tbody></table>"


def _section(title: str, body: str) -> str:
    return f"<section><h2>{_e(title)}</h2>{body}</section>"


def _png_from_file(draw: Callable[[Path], Any]) -> bytes:
    """Run a plot function that writes a PNG to a path; return the PNG's bytes."""
    with tempfile.TemporaryDirectory(prefix="sp-report-") as folder:
        path = Path(folder) / "figure.png"
        draw(path)
        return path.read_bytes()


def _size_text(n_bytes: int) -> str:
    size = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n_bytes} B"  # pragma: no cover


def _disk_bytes(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):  # symlinks are not followed
        for name in files:
            path = Path(root) / name
            if not path.is_symlink():
                total += path.stat().st_size
    return total


def _locate(run_dir: Path) -> tuple[Path, dict[str, Any]]:
    """The archive directory and the config (``{}`` without one) of a run or archive folder."""
    run = RunArchive.locate(run_dir)
    if not run.exists():
        raise RunDirError(f"{run_dir} holds no archive (archive/index.sqlite).")
    return run.archive_path, {} if run.config is None else run.config.to_json()


# ------------------------------------------------------------------------------------------------
# Sections
# ------------------------------------------------------------------------------------------------


def _elo_section(snapshots: list[Any]) -> str:
    points = [(s.step, float(s.ratings["elo"]), s.id) for s in snapshots if "elo" in s.ratings]
    if not points:
        return _section("Elo over learner steps", _note("No snapshot has a stored Elo rating."))
    rows = [
        [s.id, f"{s.step:,d}", f"{float(s.ratings['elo']):.0f}" if "elo" in s.ratings else "-"]
        for s in snapshots
    ]
    table = _table(["snapshot", "learner step", "Elo"], rows)
    unrated = [s.id for s in snapshots if "elo" not in s.ratings]
    missing = (
        f"<p class='sub'>Not drawn, without a stored Elo (no game rated them yet): "
        f"{_e(', '.join(unrated))}.</p>"
        if unrated
        else ""
    )
    if len({step for step, _, _ in points}) < 2:  # one step: no curve, an axis around nothing
        step = points[0][0]
        if len(points) == 1:
            what = f"Only {points[0][2]} (learner step {step:,d}) has an Elo"
        else:
            what = f"The {len(points)} snapshots with an Elo are all at learner step {step:,d}"
        text = (
            f"<p class='sub'>{_e(what)}, so there is no curve to draw; the table lists every "
            "snapshot.</p>"
        )
        return _section("Elo over learner steps", text + missing + table)
    try:
        from ..evaluation.plots import new_figure

        figure = new_figure(7.0, 3.6)
    except ImportError as error:
        return _section("Elo over learner steps", _no_plot(error) + table)
    axes = figure.add_subplot()
    axes.plot([p[0] for p in points], [p[1] for p in points], "o-")
    axes.set_xlabel("learner step")
    axes.set_ylabel("online Elo")
    axes.set_title("The learner's online Elo at each snapshot")
    axes.grid(True, alpha=0.3)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    body = _image(buffer.getvalue(), "image/png", "Elo over learner steps")
    note = (
        "<p class='sub'>Online Elo as the training callback updated it after every game; the "
        "Bradley-Terry fit below re-rates every game at once.</p>"
    )
    details = f"<details><summary>Elo of each snapshot</summary>{table}</details>"
    return _section("Elo over learner steps", body + note + missing + details)


def _ratings_section(ratings: Any, problem: str | None) -> str:
    title = "Bradley-Terry ratings (95% intervals)"
    if ratings is None:
        return _section(title, _note(problem or "No ratings."))
    body = ""
    try:
        from ..evaluation.plots import plot_ratings

        body = _image(_png_from_file(lambda path: plot_ratings(ratings, path)), "image/png", title)
    except ImportError as error:
        body = _no_plot(error)
    baselines = sorted(ratings.baselines)
    rows = []
    for s in ratings.snapshots:
        rated = math.isfinite(s.rating)
        interval = f"[{s.low:.0f}, {s.high:.0f}]" if math.isfinite(s.low) else "-"
        records = [
            "{}-{}-{}".format(*s.baseline_results[b]) if b in s.baseline_results else "-"
            for b in baselines
        ]
        skill = ratings.skill_text(s.id)
        rating = f"{s.rating:.0f}" if rated else "-"
        rows.append([s.id, f"{s.step:,d}", rating, interval, skill, s.games] + records)
    for name, rating in sorted(getattr(ratings, "humans", {}).items()):  # sp-wrappers play
        low, high = ratings.fit.intervals.get(name, (math.nan, math.nan))
        interval = f"[{low:.0f}, {high:.0f}]" if math.isfinite(low) else "-"
        games = int(ratings.fit.games_played.get(name, 0))
        row = [f"{name} (a person)", "-", f"{rating:.0f}", interval, "-", games]
        rows.append(row + ["-"] * len(baselines))
    for name in baselines:
        rows.append(
            [name, "-", f"{ratings.baselines[name]:.0f}", "reference", "-", "-"]
            + ["-"] * len(baselines)
        )
    header = ["player", "step", "rating", "95% interval", "skill ± σ", "games"]
    header += [f"vs {b} (W-D-L)" for b in baselines]
    anchor = (
        f"{ratings.anchor} fixed at {ratings.anchor_rating:.0f}"
        if ratings.anchor
        else "mean-centred (no anchor among the players)"
    )
    text = (
        f"<p class='sub'>Over the whole match history, Elo scale, {_e(anchor)}. Skill: "
        "openskill's Weng-Lin rating over the same games in order, with its standard deviation "
        "(the kind the training callback logs online as selfplay/skill).</p>"
    )
    return _section(title, body + text + _table(header, rows))


def _payoff_section(archive: Any) -> str:
    from ..evaluation.round_robin import RoundRobinResult

    title = "Payoff matrix"
    evaluated = bool(archive.matches(source="evaluation"))
    payoff = RoundRobinResult.from_archive(archive, source="evaluation" if evaluated else None)
    if len(payoff.players) < 2:
        return _section(title, _note("Fewer than two players have games; nothing to show."))
    kind = "evaluation games" if evaluated else "all games (no tournament yet)"
    numbers = f"<pre>{_e(payoff.table())}</pre>"
    try:
        from ..evaluation.plots import plot_payoff

        png = _png_from_file(
            lambda path: plot_payoff(payoff, path, title=f"Payoff, {kind}", stacked=True)
        )
    except ImportError as error:
        return _section(title, _no_plot(error) + numbers)
    # the panels one above the other, at most 1,000 pixels wide: the section's width in a
    # 1280-pixel window, so the figure fits at its own size with its numbers readable
    image = _image(png, "image/png", f"payoff matrix, {kind}")
    details = f"<details><summary>The payoff numbers as text</summary>{numbers}</details>"
    return _section(title, image + details)


def _is_record(tree: Any) -> bool:
    return isinstance(tree, Mapping) and {"games", "wins", "draws", "losses"} <= tree.keys()


def _evaluation_rows(tree: Any, label: str = "") -> list[list[Any]]:
    """``[match, games, wins, draws, losses, score]`` from ratings.json's evaluation, however
    deeply it is nested: train: opponent -> record (``vs random``); league: player -> opponent
    -> record (``main_agent_0 vs random``); teams: team -> record naming its ``opponents``
    (``agent vs random``)."""
    if not isinstance(tree, Mapping):
        return []
    if _is_record(tree):
        games = int(tree["games"] or 0)
        score = (tree["wins"] + 0.5 * tree["draws"]) / games if games else float("nan")
        return [[label, games, tree["wins"], tree["draws"], tree["losses"], f"{score:.2f}"]]
    rows: list[list[Any]] = []
    for key, value in tree.items():
        if not _is_record(value):  # a player whose records follow
            rows += _evaluation_rows(value, f"{label} {key}".strip())
        elif "opponents" in value:  # a team's record against the teams it names
            rows += _evaluation_rows(value, f"{label} {key} vs {value['opponents']}".strip())
        else:
            rows += _evaluation_rows(value, f"{label} vs {key}".strip())
    return rows


def _reference_section(run_dir: Path, ratings: Any, snapshots: list[str]) -> str:
    title = "Strength against the reference players"
    path = RunDir(run_dir).ratings_path
    try:
        summary = RATINGS_FORMAT.read(path, snapshots=snapshots) if path.is_file() else {}
    except StateFileError as error:
        return _section(title, _note(str(error)))
    rows = _evaluation_rows(summary.get("evaluation"))
    body = ""
    if rows:
        final = summary.get("final_snapshot")
        who = f"The final learner ({_e(final)})" if final else "The final learners"
        body += f"<p class='sub'>{who}, deterministic, seats alternating (ratings.json).</p>"
        body += _table(["match", "games", "wins", "draws", "losses", "score"], rows)
    if ratings is not None and ratings.baselines:
        latest = next((s for s in reversed(ratings.snapshots) if s.baseline_results), None)
        if latest is not None:
            records = [
                [f"{latest.id} vs {b}", w + d + lo, w, d, lo, f"{(w + 0.5 * d) / (w + d + lo):.2f}"]
                for b, (w, d, lo) in latest.baseline_results.items()
            ]
            body += f"<p class='sub'>The newest snapshot with such games, {_e(latest.id)}:</p>"
            body += _table(["match", "games", "wins", "draws", "losses", "score"], records)
    return _section(title, body or _note("This run has no games against reference players."))


def _tactics_cell(tactics: Mapping[str, Any], count: str, chances: str) -> str:
    done, total = int(tactics.get(count, 0)), int(tactics.get(chances, 0))
    return f"{done} of {total} ({done / total:.2f})" if total else f"{done} of {total}"


def _tactics_section(run_dir: Path) -> str:
    """The learner's one-move tactics at each strength evaluation (``strength.json``'s
    ``tactics``; empty when the run has none)."""
    from ..training.strength import HISTORY_NAME
    from ..training.strength_history import STRENGTH_FORMAT

    title = "One-move tactics"
    path = run_dir / HISTORY_NAME
    if not path.is_file():
        return ""
    try:
        history = STRENGTH_FORMAT.read(path)
    except StateFileError as error:
        return _section(title, _note(str(error)))
    evaluations = [e for e in history["evaluations"] if "tactics" in e]
    if not evaluations:
        return ""
    rows = [
        [
            f"{int(e.get('step', 0)):,d}",
            e["tactics"].get("opponent", "-"),
            _tactics_cell(e["tactics"], "wins_taken", "win_chances"),
            _tactics_cell(e["tactics"], "threats_blocked", "single_threats"),
            _tactics_cell(e["tactics"], "wins_handed", "safe_chances"),
        ]
        for e in evaluations
    ]
    header = [
        "learner step",
        "games against",
        "immediate wins taken",
        "single threats blocked",
        "wins handed over (lower is better)",
    ]
    text = (
        "<p class='sub'>In the positions the learner met (deterministic, every opening in both "
        "seats; strength.json): the moves that won at once which it took, the single threats "
        "it blocked, and how often it handed the opponent an immediate win when a safe move "
        "existed. Each move and reply is played on a copy of the game.</p>"
    )
    return _section(title, text + _table(header, rows))


def _exploitability_section(run_dir: Path) -> str:
    """The exploitability curve of ``exploitability.json`` (empty when the run has none)."""
    from ..training.exploitability import (
        EXPLOITABILITY_HISTORY,
        plot_exploitability,
        read_exploitability,
    )

    title = "Exact exploitability"
    path = run_dir / EXPLOITABILITY_HISTORY
    if not path.is_file():
        return ""
    try:
        history = read_exploitability(path)
    except ValueError as error:
        return _section(title, _note(str(error)))
    evaluations = history["evaluations"]
    if not evaluations:
        return _section(title, _note(f"{path.name} holds no measurement yet."))
    try:
        body = _image(
            _png_from_file(lambda out: plot_exploitability(history, out)), "image/png", title
        )
    except ImportError as error:
        body = _no_plot(error)
    rows = []
    for e in evaluations:
        mixture = e.get("nash_mixture")
        rows.append(
            [
                f"{e['step']:,d}",
                f"{e['learner']['exploitability']:.4f}",
                f"{e['learner']['nash_conv']:.4f}",
                f"{mixture['exploitability']:.4f}" if mixture else "-",
                len(mixture["weights"]) if mixture else "-",
            ]
        )
    header = ["learner step", "learner", "learner NashConv", "Nash mixture", "snapshots mixed"]
    measured = history.get("snapshots", {})
    best = min(measured.items(), key=lambda kv: kv[1]["nash_conv"], default=None)
    text = (
        f"<p class='sub'>What a best-responding opponent wins per game ({_e(history['method'])}, "
        f"{'greedy play' if history['deterministic'] else 'sampled play'}); NashConv is its sum "
        "over the two seats, 0 at a Nash equilibrium.</p>"
    )
    if best is not None:
        text += (
            f"<p class='sub'>Least exploitable snapshot: {_e(best[0])} (exploitability "
            f"{best[1]['exploitability']:.4f}).</p>"
        )
    details = f"<details><summary>Every measurement</summary>{_table(header, rows)}</details>"
    return _section(title, body + text + details)


def _psro_section(run_dir: Path) -> str:
    """A PSRO run's meta-mixture exploitability per iteration (``psro.json``; else empty)."""
    if not (run_dir / PSRO_NAME).is_file():  # checked first: other runs never import the league
        return ""
    from ..league.psro import plot_psro, read_psro

    try:
        state = read_psro(run_dir / PSRO_NAME)
        body = _image(_png_from_file(lambda out: plot_psro(state, out)), "image/png", "PSRO")
    except ValueError as error:
        return _section("PSRO", _note(str(error)))
    except ImportError as error:
        body = _no_plot(error)
    rows = [
        [r["iteration"], f"{r['steps']:,d}", f"{r['train_seconds']:.0f}"]
        + ["-" if r["exploitability"] is None else f"{r['exploitability']:.4f}"]
        + [support_text(r["weights"])]
        for r in state["iterations"]
    ]
    header = ["iteration", "learner steps", "training s", "exploitability", "meta-weights"]
    return _section("PSRO", body + _table(header, rows))


def _archive_section(archive: Any, archive_path: Path, disk: int) -> str:
    every = archive.snapshots(include_pruned=True)
    pruned = sum(1 for s in every if s.pruned)
    rows = [
        ["snapshots listed", len(every) - pruned],
        ["snapshots pruned", pruned],
        ["matches recorded", archive.n_matches()],
        ["bytes on disk", f"{disk:,d} ({_size_text(disk)})"],
    ]
    return _section(
        "The archive", f"<p class='sub'>{_e(archive_path)}</p>" + _table(["", ""], rows)
    )


def _replay_section(archive: Any, config: Mapping[str, Any], ratings: Any, max_moves: int) -> str:
    title = "Replay: the latest snapshot against the best earlier one"
    snapshots = archive.snapshots()
    game = config.get("game")
    if not snapshots or not game:
        why = "no snapshots" if not snapshots else "no config.json naming the game"
        return _section(title, _note(f"No replay: the run has {why}."))
    latest = snapshots[-1].id
    earlier = [s.id for s in snapshots[:-1]]
    rated = {s.id: s.rating for s in (ratings.snapshots if ratings else ()) if s.id in earlier}
    rated = {k: v for k, v in rated.items() if math.isfinite(v)}
    opponent: str = (
        max(rated, key=lambda k: rated[k]) if rated else (earlier[-1] if earlier else "")
    )
    why = "the highest-rated earlier snapshot" if rated else "the previous snapshot"
    from ..archive.store import ArchiveError
    from ..core.policies import RandomPolicy
    from ..evaluation.replay import play_replay
    from ..evaluation.replay_video import write_replay

    player_b: Any = opponent or RandomPolicy()
    if not opponent:
        why = "the only snapshot, so it plays RandomPolicy"
    try:
        from ..games.registry import game_factory

        kwargs = {**(config.get("game_kwargs") or {}), "render_mode": "rgb_array"}
        replay = play_replay(
            game_factory(str(game), kwargs), latest, player_b, archive=archive, max_moves=max_moves
        )
        with tempfile.TemporaryDirectory(prefix="sp-report-") as folder:
            gif = write_replay(replay, Path(folder) / "replay.gif", size=360).read_bytes()
    except ImportError as error:
        return _section(title, _note(f"No replay: {error}"))
    except (ArchiveError, ValueError, TypeError, KeyError) as error:
        return _section(title, _note(f"No replay: {game} cannot be replayed here ({error})."))
    body = f"<p class='sub'>{_e(latest)} against {_e(opponent or 'random')} ({_e(why)}): "
    body += f"{_e(replay.result)}, {len(replay.moves)} moves, seed {replay.seed}.</p>"
    body += _image(gif, "image/gif", f"replay: {replay.title}")
    if replay.turn_based:
        body += f"<details><summary>Move by move</summary><pre>{_e(replay.text())}</pre></details>"
    return _section(title, body)


def _config_section(config: Mapping[str, Any]) -> str:
    title = "Configuration (config.json)"
    if not config:
        return _section(title, _note("No config.json: this is an archive without its run."))
    simple = [[k, v] for k, v in config.items() if isinstance(v, str | int | float | bool)]
    for key in ("sampler", "hyperparams"):
        if isinstance(config.get(key), Mapping):
            simple += [[f"{key}.{k}", json.dumps(v)] for k, v in config[key].items()]
    full = f"<pre>{_e(json.dumps(config, indent=2))}</pre>"
    table = _table(["setting", "value"], simple)
    return _section(title, table + f"<details><summary>The whole file</summary>{full}</details>")


# ------------------------------------------------------------------------------------------------
# The page
# ------------------------------------------------------------------------------------------------


def write_report(
    run_dir: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    replay: bool = True,
    replay_max_moves: int = 300,
    anchor: str | None = "random",
    trusted_modules: Sequence[str] = (),
) -> Path:
    """Write the run report, one self-contained HTML page (see the module docstring).

    :param run_dir: a run directory (``sp-wrappers train`` or ``league``) or an archive folder.
    :param out: the page to write (default: ``RUN_DIR/report.html``).
    :param replay: include the replay of the latest snapshot against the best earlier one.
    :param replay_max_moves: stop the replay after this many moves (a bound for Atari games).
    :param anchor: the player pinned at 1000 in the Bradley-Terry ratings when it has games.
    :param trusted_modules: modules whose classes the replay's snapshots may name, on top of
        those the run's ``config.json`` names (see
        :func:`~sp_wrappers.runs.rundir.run_trusted_modules`).
    :return: the path written.
    :raises FileNotFoundError: ``run_dir`` holds no archive (a
        :class:`~sp_wrappers.runs.rundir.RunDirError`: the message says what to pass).

    >>> import tempfile
    >>> from pettingzoo.classic import tictactoe_v3
    >>> from sp_wrappers import PerfectTicTacToePolicy, RandomPolicy, SnapshotArchive, play_match
    >>> folder = tempfile.mkdtemp()
    >>> archive = SnapshotArchive(folder)
    >>> _ = play_match(tictactoe_v3.env, PerfectTicTacToePolicy(), RandomPolicy(), 4,
    ...                archive=archive)
    >>> page = write_report(folder).read_text()
    >>> "Payoff matrix" in page, "http://" in page or "https://" in page
    (True, False)
    """
    from ..archive.store import SnapshotArchive

    root = Path(run_dir)
    archive_path, config = _locate(root)
    trusted = run_trusted_modules(config, trusted_modules)
    with SnapshotArchive(archive_path, create=False, trusted_modules=trusted) as archive:
        page = _page(root, archive_path, archive, config, replay, replay_max_moves, anchor)
    path = Path(out) if out is not None else root / REPORT_NAME
    atomic_write(path, page)
    return path


def _page(
    root: Path,
    archive_path: Path,
    archive: Any,
    config: Mapping[str, Any],
    replay: bool,
    replay_max_moves: int,
    anchor: str | None,
) -> str:
    """The whole page's text."""
    from .. import __version__
    from ..ratings.archive_ratings import archive_ratings

    # ratings.json lies in the run directory, the parent when run_dir is its archive/ folder
    home = root.parent if archive_path == root and root.name == ARCHIVE_DIR else root
    try:
        ratings, problem = archive_ratings(archive, anchor=anchor), None
    except ValueError as error:
        ratings, problem = None, str(error)
    snapshots = archive.snapshots()
    disk = _disk_bytes(archive_path)
    steps = max((s.step for s in snapshots), default=0)
    game = config.get("game", "unknown game")
    cards = [
        (game, "game"),
        (config.get("algo", "-"), "algorithm"),
        (f"{steps:,d}", "learner steps (newest snapshot)"),
        (len(snapshots), "snapshots"),
        (f"{archive.n_matches():,d}", "matches"),
        (_size_text(disk), "archive on disk"),
    ]
    parts = [
        f"<h1>Self-play run: {_e(root.resolve().name)}</h1>",
        f"<p class='sub'>{_e(root.resolve())}</p>",
        "<div class='cards'>"
        + "".join(f"<div class='card'><b>{_e(v)}</b><span>{_e(k)}</span></div>" for v, k in cards)
        + "</div>",
        _elo_section(snapshots),
        _ratings_section(ratings, problem),
        _payoff_section(archive),
        _reference_section(home, ratings, [s.id for s in archive.snapshots(include_pruned=True)]),
        _tactics_section(home),
        _exploitability_section(home),
        _psro_section(home),
        _archive_section(archive, archive_path, disk),
    ]
    if replay:
        parts.append(_replay_section(archive, config, ratings, replay_max_moves))
    parts.append(_config_section(config))
    stamp = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{_CSP}\">"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{_e(game)}: {_e(root.resolve().name)} report</title><style>{_CSS}</style></head>"
        f"<body><main>{''.join(parts)}</main>"
        f"<footer>sp-wrappers {_e(__version__)}, written {_e(stamp)}</footer></body></html>\n"
    )


def report_at_end(
    run_dir: str | os.PathLike[str],
    notes: list[str],
    team_archives: Mapping[str, str | os.PathLike[str]] | None = None,
) -> list[str]:
    """Write the report of a run that just finished; never raise (a finished run stays finished).

    A single learner's run and a league get ``RUN_DIR/report.html``; a team run gets one page per
    team, ``RUN_DIR/report-<team>.html`` from that team's archive (without a replay: a team's
    snapshots play only their own team's seats). A page that cannot be written adds a note to
    ``notes`` saying why and how to write it later (``sp-wrappers report``).

    :param run_dir: the run directory.
    :param notes: the run's notes; one is appended per page that could not be written.
    :param team_archives: team name -> that team's archive directory (team runs only).
    :return: the names written, relative to ``run_dir``.
    """
    run = Path(run_dir)
    pages: list[tuple[Path, Path, bool]] = [(run, RunDir(run).report_path, True)]
    if team_archives is not None:
        pages = [
            (Path(folder), RunDir(run).team_report_path(team), False)
            for team, folder in team_archives.items()
        ]
    written: list[str] = []
    for source, out, with_replay in pages:
        try:
            write_report(source, out=out, replay=with_replay)
        except Exception as error:  # noqa: BLE001 - a report never fails a finished run
            detail = " ".join(f"{type(error).__name__}: {error}".split())
            notes.append(
                f"no {out.name}: {detail}. The run itself is complete; write the page later with "
                f"`sp-wrappers report {source}{'' if out.parent == source else f' --out {out}'}`."
            )
        else:
            written.append(out.name)
    return written
