"""Timing models for the PTX simulator (the H200): occupancy, and the SM model built on the events."""
