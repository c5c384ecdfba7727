"""What the commands and the editor show as text or JSON: case trees, traffic, tune tables."""
