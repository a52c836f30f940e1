"""Plain values every layer uses: input checks, text helpers, relation names, the clock, the data
types. No I/O."""
