"""sp_wrappers: self-play for Stable-Baselines3 learners on PettingZoo games."""
