"""The memory lifecycle's runs: they apply the plans of `ripplemem/rules/lifecycle/` to a store."""
