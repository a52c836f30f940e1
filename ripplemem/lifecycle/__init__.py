"""The memory lifecycle: the pure rules (`rules/`) and the runs that apply their plans to a store."""
