"""Containers of a cluster: topology (pure), images, ports, the node, and our own reaper."""
