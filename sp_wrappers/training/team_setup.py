"""How a TeamSelfPlay run is put together and checked before it learns.

:class:`TeamSetup` resolves a run's team layout, checks its models against the teams (one model
per team, or one shared model), opens each team's archive and checks the teams' spaces; a
:class:`~sp_wrappers.training.team_selfplay.TeamSelfPlay` holds one and asks it to wire each
team's env to the other teams' samplers and to refuse a ``team_change`` shorter than an
on-policy team's rollout (:class:`TeamChangeError`). Every refusal names the fix. The
functions here build a team's env (:func:`make_team_vec_env`) and pick a ``team_change`` that fits
every team's rollout and the run's budget (what a run that sets none gets).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from stable_baselines3.common.vec_env import VecEnv

from ..archive.spaces import spaces_match
from ..archive.store import IncompatibleSnapshotError, SnapshotArchive, as_archive
from ..core.run_layout import ARCHIVES_DIR
from ..envs.observation_wrappers import check_observation_wrappers
from .errors import TeamChangeError

__all__ = [
    "TeamSetup",
    "TeamChangeError",
    "SHARED",
    "make_team_vec_env",
    "unwrap_env",
    "rollout_sizes",
    "fitting_team_change",
]


def rollout_sizes(models: Mapping[str, Any]) -> dict[str, int]:
    """``{team: n_steps x env slots}`` for the on-policy models among ``models`` (an off-policy
    learner has no rollout it must finish).

    :param models: ``{team: SB3 model}``.
    """
    from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm

    sizes = {}
    for team, model in models.items():
        env = model.get_env()
        if isinstance(model, OnPolicyAlgorithm) and env is not None:
            sizes[team] = int(model.n_steps) * int(env.num_envs)
    return sizes


def fitting_team_change(target: int, rollouts: Mapping[str, int], budget: int | None = None) -> int:
    """The multiple of every rollout size nearest to ``target`` learner steps (at least one).

    With ``budget`` (the learner steps each team trains in the run), the turn also fits the
    budget, so that every team gets its share: no longer than the budget (unless one rollout
    already is), and a divisor of it when the budget is a multiple of the rollouts (the run then
    ends on a turn boundary, every team having had the same number of turns).

    :param target: the turn length wanted (learner steps).
    :param rollouts: ``{team: rollout size}`` (:func:`rollout_sizes`).
    :param budget: each team's learner steps in the run (``None``: no limit).

    >>> fitting_team_change(819, {"adversary": 1024, "agent": 1024})
    1024
    >>> fitting_team_change(5000, {"adversary": 1024, "agent": 768})
    6144
    >>> fitting_team_change(24_576, {"adversary": 3072, "agent": 1024}, budget=4096)
    3072
    >>> fitting_team_change(19_660, {"adversary": 3072, "agent": 1024}, budget=196_608)
    24576
    """
    unit = math.lcm(*rollouts.values()) if rollouts else 1
    units = max(1, round(int(target) / unit))
    if budget is None:
        return units * unit
    whole = max(1, int(budget) // unit)  # turns of one unit that fit the budget
    if int(budget) % unit == 0:  # the divisor of the budget nearest the target (the larger on ties)
        divisors = [k for k in range(1, whole + 1) if whole % k == 0]
        return min(divisors, key=lambda k: (abs(k - int(target) / unit), -k)) * unit
    return min(units, whole) * unit


class TeamSetup:
    """The teams, models and archives of a :class:`~sp_wrappers.TeamSelfPlay` run, resolved
    and checked once (see the module docstring).

    :param env_fn: a function returning a fresh PettingZoo env.
    :param teams: ``"prefix"`` or ``{team: [agent, ...]}``.
    :param models: ``{team: SB3 model}``, or one model for every team of a symmetric game.
    :param archives: ``{team: archive or directory}`` (one for a shared model), or ``None`` for
        ``run_dir/archives/<team>``.
    :param run_dir: the run's directory (``None``: none).

    >>> import tempfile
    >>> from pettingzoo.classic import rps_v2
    >>> from stable_baselines3 import PPO
    >>> teams = {"red": ["player_0"], "blue": ["player_1"]}
    >>> models = {team: PPO("MlpPolicy", make_team_vec_env(rps_v2.env, teams, team, n_envs=1),
    ...                     n_steps=32, batch_size=32)
    ...           for team in teams}
    >>> setup = TeamSetup(rps_v2.env, teams, models, None, tempfile.mkdtemp())
    >>> setup.team_names, setup.shared, sorted(setup.opponent_archives("red"))
    (['red', 'blue'], False, ['blue'])
    >>> setup.check_rollouts(team_change=16)
    Traceback (most recent call last):
    ...
    sp_wrappers.training.errors.TeamChangeError: team_change=16 is shorter than the rollout ...
    """

    def __init__(
        self,
        env_fn: Callable[..., Any],
        teams: Any,
        models: Mapping[str, Any] | Any,
        archives: Any,
        run_dir: str | os.PathLike[str] | None,
    ) -> None:
        self.env_fn = env_fn
        #: ``teams=`` as given (``"prefix"`` or a mapping)
        self.teams_spec = teams
        self.run_dir = None if run_dir is None else Path(run_dir)
        self.layout = self._layout(teams)
        names = list(self.layout.names)
        #: one model for every team (symmetric games)
        self.shared = not isinstance(models, Mapping)
        if not self.shared and len({id(m) for m in models.values()}) == 1 and len(models) > 1:
            self.shared, models = True, next(iter(models.values()))
        #: the teams that learn, in learning order (``["shared"]`` for one shared model)
        self.team_names = [SHARED] if self.shared else names
        self.models: dict[str, Any] = (
            {SHARED: models} if self.shared else self._check_models(models, names)
        )
        self.archives: dict[str, SnapshotArchive] = self._open_archives(archives)
        self._check_spaces()

    # -- what the run asks -----------------------------------------------------------------------
    def per_team(self, value: Any, name: str) -> dict[str, Any]:
        """``{team: value}`` for every team: ``value`` itself when it is a mapping (checked to
        name every team and no other), else the one value for every team.

        :param value: the value, or ``{team: value}``.
        :param name: the argument's name, for the errors.
        """
        if isinstance(value, Mapping):
            unknown = [t for t in value if t not in self.team_names]
            if unknown:
                raise ValueError(
                    f"{name} names team(s) {unknown}, but the teams are {self.team_names}; "
                    f"key {name} by team name, or pass one value for every team."
                )
            missing = [t for t in self.team_names if t not in value]
            if missing:
                raise ValueError(f"{name} has no value for team(s) {missing}; give every team one.")
            return {t: value[t] for t in self.team_names}
        return {t: value for t in self.team_names}

    def opponent_archives(self, team: str) -> dict[str, SnapshotArchive]:
        """The archives of the teams ``team`` plays against (none for the shared model, whose
        opponents come from its own archive)."""
        if self.shared:
            return {}
        return {t: a for t, a in self.archives.items() if t != team}

    def n_games(self, team: str) -> int:
        """The game copies of ``team``'s env (without a team env: its slots over the team's
        size)."""
        env = self.models[team].get_env()
        inner = unwrap_env(env)
        n_games = getattr(inner, "n_games", None)
        if n_games is None:
            n_games = env.num_envs // max(1, len(self.layout.teams.get(team, (None,))))
        return max(1, int(n_games))

    def wire_envs(self, samplers: Mapping[str, Any]) -> None:
        """Give every model's env its opponents: the other teams' samplers (one sampler for the
        shared model), after checking that each env is the team's (no observation wrapper above
        it, its learner the team).

        :param samplers: ``{team: sampler}`` over each team's archive.
        """
        for team in self.team_names:
            env = self.models[team].get_env()
            if env is None:
                raise ValueError(
                    f"The model for team {team!r} has no env; build it on make_team_vec_env."
                )
            check_observation_wrappers(env)
            plays = getattr(unwrap_env(env), "learner_teams", None)
            wanted = self.layout.names if self.shared else [team]
            if plays is not None and list(plays) != list(wanted):
                build = "'random'" if self.shared else repr(team)
                raise ValueError(
                    f"The model for team {team!r} trains on an env whose learner plays "
                    f"{list(plays)}, not {wanted}. Build it on make_team_vec_env(env_fn, teams, "
                    f"{build})."
                )
            if self.shared:
                opponent: Any = samplers[SHARED]
            else:
                opponent = {t: samplers[t] for t in self.team_names if t != team}
            env.env_method("set_opponent", opponent)

    def check_rollouts(self, team_change: int) -> None:
        """Refuse a ``team_change`` shorter than a team model's rollout.

        An on-policy learner (PPO, A2C, ``MaskablePPO``) collects a whole rollout of ``n_steps``
        per env slot in every ``learn`` call, so a turn shorter than ``n_steps * num_envs``
        learner steps would silently run a whole rollout each turn. (The shared model has no
        team change.)

        :param team_change: the learner steps of each turn.
        :raises TeamChangeError: naming the team, both numbers and a ``team_change`` that fits.
        """
        if self.shared:
            return
        rollouts = rollout_sizes(self.models)
        for team, rollout in rollouts.items():
            if team_change < rollout:
                model = self.models[team]
                raise TeamChangeError(
                    team,
                    team_change,
                    model.n_steps,
                    model.get_env().num_envs,
                    fitting_team_change(team_change, rollouts),
                )

    # -- the checks ------------------------------------------------------------------------------
    def _layout(self, teams: Any) -> Any:
        from ..core.teams import TeamLayout

        game = self.env_fn()
        try:
            agents = list(game.possible_agents)
        finally:
            game.close()
        layout = TeamLayout.from_spec(teams, agents)
        if len(layout.names) < 2:
            raise ValueError(
                f"TeamSelfPlay needs at least two teams, but teams={teams!r} makes one team "
                f"{layout.names} of the agents {agents}; pass a mapping with two teams or more."
            )
        return layout

    def _check_models(self, models: Mapping[str, Any], names: list[str]) -> dict[str, Any]:
        unknown = [t for t in models if t not in names]
        if unknown:
            raise ValueError(
                f"models has teams {unknown} that the game does not have; its teams are {names}. "
                "Key models by team name (teams='prefix' names them after the agents)."
            )
        missing = [t for t in names if t not in models]
        if missing:
            raise ValueError(
                f"models has no model for team(s) {missing}; give every team one, built on "
                f"make_team_vec_env(env_fn, teams, {missing[0]!r}), or one model for every team "
                "of a symmetric game (models=model)."
            )
        return {t: models[t] for t in names}

    def _open_archives(self, archives: Any) -> dict[str, SnapshotArchive]:
        if archives is None:
            if self.run_dir is None:
                raise ValueError(
                    "TeamSelfPlay needs archives={team: directory} or a run_dir to put them in."
                )
            archives = {t: self.run_dir / ARCHIVES_DIR / t for t in self.team_names}
        if not isinstance(archives, Mapping):
            if not self.shared:
                raise ValueError(
                    "archives must be a mapping {team: archive} with one archive per team; a "
                    "single archive only goes with one model shared by every team."
                )
            archives = {SHARED: archives}
        if self.shared and set(archives) != {SHARED}:
            values = list(archives.values())
            if len({str(getattr(a, "path", a)) for a in values}) != 1:
                raise ValueError(
                    "One model shared by every team learns from one archive; pass archives=path "
                    "(or {'shared': path}) instead of one per team."
                )
            archives = {SHARED: values[0]}
        opened = self.per_team(archives, "archives")
        opened = {
            t: as_archive(a, owner=f"TeamSelfPlay(archives[{t!r}])") for t, a in opened.items()
        }
        paths: dict[Path, str] = {}
        for team, archive in opened.items():
            where = archive.path.resolve()
            if where in paths:
                raise ValueError(
                    f"Teams {paths[where]!r} and {team!r} were given the same archive {where}; "
                    "each team needs its own archive directory."
                )
            paths[where] = team
        return opened

    def _check_spaces(self) -> None:
        """Each model fits its team's spaces, each archive its team's; a shared model needs every
        team to have the same spaces."""
        spaces_of = {team: self._team_spaces(team) for team in self.layout.names}
        if self.shared:
            first = self.layout.names[0]
            for team in self.layout.names[1:]:
                if not all(map(spaces_match, spaces_of[team], spaces_of[first])):
                    raise ValueError(
                        f"One model cannot play teams whose spaces differ: team {first!r} has "
                        f"{spaces_of[first]} and team {team!r} has {spaces_of[team]}. Pass "
                        "models={team: model} with one model per team."
                    )
        for team in self.team_names:
            model = self.models[team]
            expected = spaces_of[self.layout.names[0] if self.shared else team]
            got = (model.observation_space, model.action_space)
            if not all(map(spaces_match, got, expected)):
                raise ValueError(
                    f"The model for team {team!r} was built for spaces {got}, but the team's "
                    f"agents have {expected}. Build it on make_team_vec_env(env_fn, teams, "
                    f"{team!r}) (models are keyed by the team they play)."
                )
            try:
                self.archives[team].check_compatible(model)
            except IncompatibleSnapshotError as error:
                raise IncompatibleSnapshotError(
                    f"The archive given for team {team!r} holds snapshots of other spaces (another "
                    f"team's, or another game's): {error} Key archives by the team whose "
                    "snapshots they hold, and give each team its own archive directory."
                ) from None

    def _team_spaces(self, team: str) -> tuple[Any, Any]:
        env = make_team_vec_env(self.env_fn, self.teams_spec, team, n_envs=1, monitor=False)
        try:
            return env.observation_space, env.action_space
        finally:
            env.close()


SHARED = "shared"


def make_team_vec_env(
    env_fn: Callable[..., Any],
    teams: Any,
    team: str,
    n_envs: int = 4,
    seed: int | None = None,
    monitor: bool = True,
    **kwargs: Any,
) -> VecEnv:
    """The training env of one team's model: :func:`~sp_wrappers.make_selfplay_vec_env` with
    ``teams=teams`` and ``learner=team``.

    :param env_fn: a function returning a fresh PettingZoo env.
    :param teams: ``"prefix"``, ``{team: [agent, ...]}`` (see :class:`~sp_wrappers.TeamSelfPlay`).
    :param team: the learning team, or ``"random"`` for one model shared by every team.
    :param n_envs: game copies (the env has ``n_envs * len(team's agents)`` slots).
    :param seed: seeds the first reset (copy ``i`` gets ``seed + i``).
    :param monitor: wrap in ``VecMonitor``.
    :param kwargs: any other :class:`~sp_wrappers.SelfPlayVecEnv` argument. The opponents are
        set by :class:`TeamSelfPlay`; until then they play at random.
    """
    from ..envs.vector.factory import make_selfplay_vec_env

    return make_selfplay_vec_env(
        env_fn, n_envs=n_envs, seed=seed, monitor=monitor, teams=teams, learner=team, **kwargs
    )


def unwrap_env(env: Any) -> Any:
    """The :class:`SelfPlayVecEnv` under SB3's VecEnv wrappers."""
    while not hasattr(env, "copies") and hasattr(env, "venv"):
        env = env.venv
    return env
