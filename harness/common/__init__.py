"""Small helpers every layer may use: waiting, child processes, client logging."""
