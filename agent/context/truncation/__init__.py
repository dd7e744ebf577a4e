"""Tool output for the model: normalised, middle-truncated, the full output saved to a file."""
