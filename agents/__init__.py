"""Agents (imported as ``taluva_ai.agents``)."""
