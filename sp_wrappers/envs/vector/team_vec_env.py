"""A learner team in a vector env: one slot per team agent (parameter sharing).

:class:`TeamVecEnv` is what ``make_selfplay_vec_env(..., teams=...)`` builds: a subclass of
:class:`~sp_wrappers.SelfPlayVecEnv` (so ``isinstance(env, SelfPlayVecEnv)`` holds) that shares its
set-up, game loop and opponent batches and changes what is per slot; each game copy's
main-process side is an :class:`~sp_wrappers.envs.vector.env_copy.EnvCopy` with a team.

Layout: ``n_envs`` game copies, ``team_size`` slots each; slot ``g * team_size + k`` is agent ``k``
(game order) of the learner's team in copy ``g``, so one SB3 model plays every agent of the team
and learns from all of their experience (as SuperSuit's ``pettingzoo_env_to_vec_env``). A vector
step plays each team agent's action at its next turn (one round in simultaneous-move games; see
:mod:`sp_wrappers.envs.vector.team_driver`). The copy's slots end their episode together, when every
agent of the team is done; only the copy's first slot carries ``info["selfplay"]`` (one match record
per game), every slot carries ``seat``, ``team`` and, at the end, its own ``terminal_observation``
and ``TimeLimit.truncated``: its agent's own end (an agent that terminated early is not
bootstrapped; a teammate cut by the time limit is, from its own last observation).

Opponents: each opposing team plays one policy per episode, drawn from its entry of
``opponent={team: source}`` (or once per opposing team from a plain source), so all of its agents
in all copies facing the same policy are answered by one batched ``act`` call.
``sync_latest_weights`` reaches a plain opponent source (the symmetric case: every team drawn from
the learner's archive) but not a per-team mapping's sources, which hold the other teams' policies.
With ``swap_unit="steps"`` a vector step counts as one round of each copy's game: a team's own
source (``{team: source}``) counts that team's agent steps (its size per round), so an opposing
team's swaps are counted in its own steps, as ML-Agents counts a ghost's; a plain source counts
the learner team's (``team_size`` per vector step, as SB3's ``num_timesteps``).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import (
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)

from ...core.seats import check_learner_action
from ...core.teams import LEARNER_TEAM_MODES, TeamLayout, resolve_learner_teams, team_summary
from ...opponents.team_slots import TeamSlots, check_opponent_teams, shared_random_policies
from ..selfplay_env import zero_observation
from .env_copy import EnvCopy
from .game_workers import PLAY, RESET, GameSpec, Status
from .team_driver import OpponentActions, TeamActions, TeamDriver
from .vec_env import SelfPlayVecEnv

__all__ = ["TeamVecEnv"]


class _TeamCopy(EnvCopy):
    """One game copy with a learner team: its team this episode (``learner``), opponents per
    opposing team, random stream."""

    def _init_opponents(self, opponent: Any) -> None:
        self._default_opponents = None
        self.opponent_spec = opponent
        self.slots: TeamSlots = TeamSlots(
            opponent, self.settings.layout, self.settings.default_opponents
        )
        self.opponent_source = self.slots.source

    @property
    def team(self) -> str:
        """The learner's team in this copy's current episode."""
        return self.learner

    def action_masks(self) -> np.ndarray:
        """The team agents' legal actions, shape ``(team_size, n_actions)``."""
        masks = None if self.status is None else self.status.mask
        if masks is None or any(m is None for m in masks):
            raise TypeError("action_masks() needs a Discrete action space (and a reset env).")
        return np.stack(masks)

    def sync_latest_weights(self, version: int, state: Any) -> None:
        """Give a plain opponent source the learner's newest weights (see the module docstring)."""
        if self.slots.sync_latest_weights(version, state):
            self.placement.place(getattr(self.slots.source, "latest", None))

    def set_opponent(self, opponent: Any) -> None:
        """Play ``opponent`` (a source, or ``{team: source}``) from this copy's next episode on
        (with ``opponent_draw="shared"``, the copies given the same ``opponent`` share one
        line-up, as at construction; the other copies keep theirs)."""
        check_opponent_teams(opponent, self.settings.layout, self.learner_seats)
        self._init_opponents(opponent)

    def episode_summary(self, status: Status) -> dict[str, Any]:
        """``info["selfplay"]`` at the end of the team's episode (``seat``/``return``: the team's
        first agent's; ``team_return``: the sum over the team)."""
        layout = self.settings.layout
        seat = layout.teams[self.learner][0]
        returns = dict(status.returns or {})
        summary: dict[str, Any] = {
            "seat": seat,
            "return": returns.get(seat, 0.0),
            "returns": returns,
            "length": status.length,
        }
        summary.update(
            team_summary(
                layout,
                self.learner,
                returns,
                self.seat_policies,
                self.outcome_fn,
                seat,
                status.illegal_action,
            )
        )
        if status.illegal_action is not None:
            summary["illegal_action"] = status.illegal_action
        if self.config.configured:
            summary["config"] = self.config.describe()
        return summary

    def start_game(self) -> tuple:
        self.phase = RESET
        self.games_started += 1  # recurrent opponents start a fresh state in each game
        team = self._forced_seat or self.seat_chooser.next(self.np_random)
        self.learner = team
        self.seat_policies = self.slots.seat_lineup(team, self.np_random, self.opponent_spaces)
        for policy in self.seat_policies.values():
            self.placement.place(policy)
        agents = self.settings.layout.teams[team]
        return (RESET, self.index, agents, self._game_seed, self._reset_options)

    def begin_step(self, action: Any) -> tuple:
        self.phase = PLAY
        self.slots.count_step()
        return (PLAY, self.index, TeamActions(action), True)


class TeamVecEnv(SelfPlayVecEnv):
    """A :class:`~sp_wrappers.SelfPlayVecEnv` whose learner is a team (see the module docstring);
    built by ``make_selfplay_vec_env(..., teams=...)``.

    >>> from mpe2 import simple_tag_v3
    >>> env = TeamVecEnv(
    ...     lambda: simple_tag_v3.env(max_cycles=5, continuous_actions=False),
    ...     n_envs=2, learner="adversary", teams="prefix")
    >>> type(env).__name__, env.num_envs, env.n_games, env.team_size
    ('TeamVecEnv', 6, 2, 3)
    >>> env.reset().shape
    (6, 16)
    >>> for _ in range(5):
    ...     obs, rewards, dones, infos = env.step(np.zeros(6, dtype=np.int64))
    >>> dones.tolist() == [True] * 6, infos[0]["selfplay"]["opponent_teams"]
    (True, {'agent': 'random'})
    >>> env.close()
    """

    layout: TeamLayout
    _driver_type = TeamDriver
    _copy_type = _TeamCopy

    def _resolve_learner(
        self, spec: GameSpec, learner: str, opponents: list[Any]
    ) -> tuple[list[str], list[str]]:
        """The teams the learner may play (``learner_seats``, also ``learner_teams``), and the
        agents of its first team (one slot each), checked against the opponents."""
        self.layout = TeamLayout.from_spec(self.teams, spec.possible_agents)
        teams = resolve_learner_teams(spec, self.layout, learner, self.keep_dict_obs)
        members = list(self.layout.teams[teams[0]])
        if learner not in self.layout.teams and learner not in LEARNER_TEAM_MODES:
            if len(members) > 1:
                raise ValueError(
                    f"learner={learner!r} is one agent of team {teams[0]!r} {members}; "
                    "with teams, SelfPlayVecEnv's learner plays the whole team (one slot per "
                    f"agent): pass learner={teams[0]!r}."
                )
        for opponent in opponents:
            check_opponent_teams(opponent, self.layout, teams)
        self.learner_teams = teams
        if len(members) > 1 and not spec.metadata.get("is_parallelizable"):
            warnings.warn(
                f"{spec.metadata.get('name', 'This game')} is turn-based (its metadata does not "
                "say is_parallelizable), but a team vec env steps every team agent once per "
                "vector step on the observations of the step's start: an agent that moves after "
                "others in the step acts on an old observation (and may find its action no longer "
                "legal). Prefer SelfPlayEnv for turn-based team games (its learner and teammates "
                "act on their own turns).",
                stacklevel=5,
            )
        return teams, members

    def _default_opponent_policies(self, spec: GameSpec) -> dict[str, Any]:
        """Random play, one policy per action space (so a random team answers in one batch)."""
        return shared_random_policies(spec.action_spaces)

    # -- VecEnv API, slot by slot ------------------------------------------------------------------
    def reset(self) -> VecEnvObs:
        """Reset every copy (copy ``g`` with the seed/options of its first slot)."""
        self._check_open()
        size = self.team_size
        items = [
            copy.begin_reset(self._seeds[g * size], self._options[g * size])
            for g, copy in enumerate(self.copies)
        ]
        self._drive(items)
        for copy in self.copies:
            for k, info in enumerate(self._slot_infos(copy)):
                self.reset_infos[copy.index * size + k] = info
        self._reset_seeds()
        self._reset_options()
        return self._stack(self._observations())

    def step_wait(self) -> VecEnvStepReturn:
        self._check_open()
        actions, self._actions = self._actions, None
        if actions is None:
            raise RuntimeError("step_wait() called without step_async(actions).")
        if len(actions) != self.num_envs:
            raise ValueError(
                f"Got {len(actions)} actions for {self.num_envs} slots ({self.n_games} games x "
                f"{self.team_size} team agents); pass one action per slot."
            )
        for copy in self.copies:
            if copy.status is None or copy.status.seat is not None:
                raise RuntimeError("step() called before reset(); call reset() first.")
        checked = self._learner_actions(actions)
        size = self.team_size
        if self.illegal_action == "raise":
            start = int(getattr(self.action_space, "start", 0))
            for copy in self.copies:
                agents = self.layout.teams[copy.learner]
                for k, agent in enumerate(agents):
                    mask = copy.status.mask[k]
                    check_learner_action(checked[copy.index * size + k], mask, agent, start)
        self._results: list[Any] = [None] * self.n_games
        self._drive(
            [
                copy.begin_step(checked[g * size : (g + 1) * size])
                for g, copy in enumerate(self.copies)
            ]
        )
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        infos: list[dict[str, Any]] = []
        for g, copy in enumerate(self.copies):
            results = self._results[g]
            if results is None:  # the episode goes on
                for k, info in enumerate(self._slot_infos(copy)):
                    info["TimeLimit.truncated"] = False
                    reward = np.broadcast_to(copy.status.reward, (size,))[k]
                    rewards[g * size + k] = copy.config.transform(reward, info)
                    infos.append(info)
                continue
            for k, (reward, info) in enumerate(results):
                rewards[g * size + k] = reward
                dones[g * size + k] = True
                infos.append(info)
            for k, info in enumerate(self._slot_infos(copy)):
                self.reset_infos[g * size + k] = info
        self._results = []
        return self._stack(self._observations()), rewards, dones, infos

    def _finish_episode(self, copy: EnvCopy, status: Status) -> None:
        summary = copy.episode_summary(status)
        copy.finished_episodes.add(summary)  # once per game, whatever the team's size
        team_end = (status.terminated, status.truncated)
        ends = status.slot_ends or [team_end] * self.team_size
        results = []
        for k, info in enumerate(self._slot_infos(copy)):
            obs = status.observation[k]
            terminated, truncated = ends[k]  # the slot's own agent's end, not the team's
            info["TimeLimit.truncated"] = bool(truncated and not terminated)
            info["terminal_observation"] = (
                zero_observation(self.observation_space) if obs is None else obs
            )
            if k == 0:
                info["selfplay"] = summary
            # Only the copy's first slot reports the episode (one match per game), but every
            # teammate's reward transform sees the outcome, as the docs promise.
            view = info if k == 0 else {**info, "selfplay": summary}
            results.append((copy.config.transform(status.reward[k], view), info))
        self._results[copy.index] = results

    def _slot_infos(self, copy: EnvCopy) -> list[dict[str, Any]]:
        return [{"seat": agent, "team": copy.learner} for agent in self.layout.teams[copy.learner]]

    def _observations(self) -> list[Any]:
        zeros = None
        out = []
        for copy in self.copies:
            for obs in copy.status.observation:
                if obs is None:
                    zeros = zero_observation(self.observation_space) if zeros is None else zeros
                    obs = zeros
                out.append(obs)
        return out

    def action_masks(self) -> np.ndarray:
        """Every slot's legal learner actions, shape ``(num_envs, n_actions)``."""
        return np.concatenate([copy.action_masks() for copy in self.copies])

    # -- opponents: several seats of one copy may be reported at once ---------------------------
    def _answer(self, turns: list[tuple[EnvCopy, Status]]) -> list[tuple]:
        """As ``SelfPlayVecEnv._answer``, with a turn of several seats (a simultaneous-move
        round) split into one row per seat and its actions sent back together."""
        rows = []
        for copy, status in turns:
            if isinstance(status.seat, tuple):
                for k, seat in enumerate(status.seat):
                    rows.append(copy.opponent_row(seat, status.observation[k], status.mask[k]))
            else:
                rows.append(copy.opponent_row(status.seat, status.observation, status.mask))
        actions = iter(self._batches.answer(rows))
        items = []
        for copy, status in turns:
            if isinstance(status.seat, tuple):
                answer: Any = OpponentActions()
                for seat in status.seat:
                    answer[seat] = next(actions)
            else:
                answer = next(actions)
            items.append((PLAY, copy.index, answer, copy.phase == PLAY))
        return items

    def _copy_indices(self, indices: VecEnvIndices) -> list[int]:
        """The game copies of the slots in ``indices`` (``set_game_config``, ``set_reward_fn``)."""
        return self._games_of(indices)[1]

    def _games_of(self, indices: VecEnvIndices) -> tuple[list[int], list[int]]:
        """The game copy of each slot in ``indices``, and those copies once each."""
        games = [i // self.team_size for i in self._get_indices(indices)]
        return games, list(dict.fromkeys(games))

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """An attribute of each slot's copy (the copy's own, else the PettingZoo game's)."""
        games, unique = self._games_of(indices)
        values = dict(zip(unique, super().get_attr(attr_name, unique), strict=True))
        return [values[g] for g in games]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute on each slot's copy (``opponent_source`` as ``set_opponent`` does)."""
        _, unique = self._games_of(indices)
        if attr_name == "opponent_source":
            try:
                for g in unique:
                    self.copies[g].set_opponent(value)
            finally:
                self._share_slots()
            return
        super().set_attr(attr_name, value, unique)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """Call a method of each slot's copy once (its result repeated for the copy's slots);
        ``action_masks`` gives each slot its own mask (what ``MaskablePPO`` asks for);
        ``drain_episodes`` gives a copy's games to its first slot asked, so each game is drained
        once."""
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in self._get_indices(indices)]
        games, unique = self._games_of(indices)
        results = super().env_method(method_name, *method_args, indices=unique, **method_kwargs)
        values = dict(zip(unique, results, strict=True))
        if method_name == "drain_episodes":
            return [values.pop(g, []) for g in games]
        return [values[g] for g in games]

    def get_images(self) -> list[Any]:
        """Each slot's game frame (the slots of one copy share it)."""
        if self.render_mode != "rgb_array":
            return list(super().get_images())
        frames = [self.games.call(g, "render", (), {}) for g in range(self.n_games)]
        return [frames[i // self.team_size] for i in range(self.num_envs)]

    def _share_slots(self) -> None:
        """With ``opponent_draw="shared"``, one set of team slots per group of copies given the
        same opponent (every copy at construction); a group whose copies did not change keeps
        its slots (its line-up and its place in the swap schedule)."""
        if self.opponent_draw != "shared":
            return
        groups: dict[int, list[_TeamCopy]] = {}
        for copy in self.copies:
            groups.setdefault(id(copy.opponent_spec), []).append(copy)
        for members in groups.values():
            slots = members[0].slots
            if all(c.slots is slots for c in members) and slots.shared_by == len(members):
                continue
            slots = TeamSlots(
                members[0].opponent_spec,
                self.layout,
                members[0].settings.default_opponents,
                shared_by=len(members),
            )
            for copy in members:
                copy.slots = slots
                copy.opponent_source = slots.source

    def __repr__(self) -> str:
        return (
            f"SelfPlayVecEnv(n_envs={self.n_games}, teams={self.teams!r}, "
            f"learner={self.learner_mode!r}, team_size={self.team_size}, "
            f"opponent_draw={self.opponent_draw!r}, num_workers={self.num_workers})"
        )


# The deprecated SelfPlayVecEnv(teams=...) builds a TeamVecEnv without importing this module.
SelfPlayVecEnv._team_env_class = TeamVecEnv
