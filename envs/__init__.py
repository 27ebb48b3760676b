"""Environments (imported as ``taluva_ai.envs``): Gymnasium, vector and PettingZoo envs."""
