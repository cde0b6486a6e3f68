"""Running one cell, phase by phase, into its result folder."""
