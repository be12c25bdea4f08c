"""Variants: each a small module that turns its options into a :class:`~mountain_rummy_env.variant.Variant`."""
