"""A features extractor for board games: small convolutions over the board's planes.

SB3's ``CnnPolicy`` (``NatureCNN``) wants images of 36x36 pixels or more, channels first and
``uint8``; PettingZoo's classic games observe boards of 3x3 to 19x19 cells as channels-last planes
(``tictactoe_v3`` ``(3, 3, 2)``, ``connect_four_v3`` ``(6, 7, 2)``, ``go_v5`` ``(N, N, 17)``,
``chess_v6`` ``(8, 8, 111)``), as ``int8`` or ``bool``. :class:`BoardExtractor` fills that gap:
a few 3x3 convolutions with ``padding=1`` (the board keeps its size, so a corner cell sees its
neighbours as the centre does), ReLU, then one linear layer to ``features_dim`` features. Use it
with any SB3 or sb3-contrib policy through ``policy_kwargs``::

    MaskablePPO("MlpPolicy", SelfPlayEnv(connect_four_v3.env()),
                policy_kwargs={"features_extractor_class": BoardExtractor,
                               "features_extractor_kwargs": {"channels": 64, "features_dim": 128}})

The learner sees the ``"observation"`` part of PettingZoo's dict observation (``SelfPlayEnv`` and
``SelfPlayVecEnv`` without ``keep_dict_obs``), which is the ``Box`` this extractor takes; masks
reach MaskablePPO through ``action_masks()``, not the network. Every constructor argument is a
plain integer, so the archive's policy spec stores it and
:meth:`~sp_wrappers.SnapshotArchive.load_policy` rebuilds the network in another process.
"""

from __future__ import annotations

import torch
from gymnasium import spaces
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

__all__ = ["BoardExtractor"]

_FIX_SPACE = (
    "BoardExtractor takes a Box of board planes (rows, columns, channels), channels last as "
    "PettingZoo's classic games give them. Build the env without keep_dict_obs (the learner then "
    "sees the 'observation' part), or keep the default MlpPolicy extractor for games whose "
    "observations are not boards."
)


def _positive(value: int, name: str, low: int = 1) -> int:
    if isinstance(value, bool) or int(value) != value or value < low:
        raise ValueError(f"BoardExtractor's {name} must be an integer >= {low}, got {value!r}.")
    return int(value)


def _board_shape(observation_space: spaces.Space) -> tuple[int, int, int]:
    """``(rows, columns, channels)`` of a channels-last board space (2-D: one channel)."""
    if isinstance(observation_space, spaces.Dict):
        raise TypeError(
            f"BoardExtractor got a Dict observation space ({observation_space}). " + _FIX_SPACE
        )
    if not isinstance(observation_space, spaces.Box):
        raise TypeError(
            f"BoardExtractor got the observation space {observation_space}. " + _FIX_SPACE
        )
    shape = tuple(observation_space.shape)
    if len(shape) == 2:
        return shape[0], shape[1], 1
    if len(shape) != 3:
        raise ValueError(
            f"BoardExtractor got observations of shape {shape}, not a board of planes. {_FIX_SPACE}"
        )
    return shape  # type: ignore[return-value]


class BoardExtractor(BaseFeaturesExtractor):
    """Convolutions over a board's planes, then a linear layer: ``features_dim`` features.

    Layers: ``n_layers`` times (``Conv2d(3x3, padding=1)`` + ReLU) with ``channels`` filters, an
    optional 1x1 convolution down to ``head_channels`` filters (AlphaZero's heads do this before
    their dense layer: it keeps the dense layer small on big boards such as 19x19 Go), flatten,
    ``Linear`` + ReLU. Observations come channels last (``(batch, rows, columns, channels)``, or
    ``(batch, rows, columns)`` for one plane) in any numeric dtype; they are cast to float.

    :param observation_space: the learner's observation space, a ``Box`` of shape
        ``(rows, columns, channels)`` or ``(rows, columns)`` (SB3 passes it).
    :param features_dim: features out (the policy and value heads' input width).
    :param channels: filters of every 3x3 convolution.
    :param n_layers: 3x3 convolutions (each sees one more cell in every direction).
    :param head_channels: filters of the 1x1 convolution before the dense layer; 0 leaves it out
        (the dense layer then takes ``channels * rows * columns`` inputs).

    >>> import numpy as np
    >>> space = spaces.Box(0, 1, (6, 7, 2), np.int8)   # connect_four_v3's "observation"
    >>> extractor = BoardExtractor(space, features_dim=32, channels=16, n_layers=2)
    >>> extractor(torch.zeros(5, 6, 7, 2)).shape
    torch.Size([5, 32])
    >>> BoardExtractor(spaces.Box(0, 1, (128,), np.float32))
    Traceback (most recent call last):
    ...
    ValueError: BoardExtractor got observations of shape (128,), not a board of planes. ...
    """

    def __init__(
        self,
        observation_space: spaces.Box,
        features_dim: int = 128,
        channels: int = 64,
        n_layers: int = 3,
        head_channels: int = 0,
    ) -> None:
        rows, columns, planes = _board_shape(observation_space)
        features_dim = _positive(features_dim, "features_dim")
        channels = _positive(channels, "channels")
        n_layers = _positive(n_layers, "n_layers")
        head_channels = _positive(head_channels, "head_channels", low=0)
        super().__init__(observation_space, features_dim)
        self.board_shape = (rows, columns, planes)
        layers: list[nn.Module] = []
        width = planes
        for _ in range(n_layers):
            layers += [nn.Conv2d(width, channels, kernel_size=3, padding=1), nn.ReLU()]
            width = channels
        if head_channels:
            layers += [nn.Conv2d(width, head_channels, kernel_size=1), nn.ReLU()]
            width = head_channels
        layers.append(nn.Flatten())
        self.convolutions = nn.Sequential(*layers)
        self.linear = nn.Sequential(nn.Linear(width * rows * columns, features_dim), nn.ReLU())

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        """Features ``(batch, features_dim)`` of a batch of boards, channels last."""
        rows, columns, planes = self.board_shape
        boards = observations.float().reshape(-1, rows, columns, planes)
        return self.linear(self.convolutions(boards.permute(0, 3, 1, 2)))

    def extra_repr(self) -> str:
        rows, columns, planes = self.board_shape
        return f"board={rows}x{columns}x{planes}, features_dim={self.features_dim}"
