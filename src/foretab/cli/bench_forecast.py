"""Placeholder: commands are added by the module owner."""
