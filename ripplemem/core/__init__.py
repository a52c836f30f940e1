"""Plain values every layer uses: input checks, text helpers, relation names, the clock. No I/O."""
