"""The `filesystem` reference server: read and edit files inside allowed directories, and nothing else."""
