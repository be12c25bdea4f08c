"""Experiments: the tournament runner, head-to-head play and the ``mountain-rummy`` CLI."""
